// `ax cron next` (SPEC 3.6).
#pragma once

#include <ostream>
#include <string_view>

namespace ax::cli {

// CronNextCommand()
//
// Prints the next `count` fire instants of `expr` in zone `tz` strictly after
// `from` (RFC 3339; empty means the current system time), one per line, in
// UTC RFC 3339 whole seconds ("2026-03-08T10:00:00Z").
//
// Returns 0 on success. On any error - an invalid expression, zone, `from`
// or count (1 to 100000), or fewer than `count` fires before the end of the
// representable range (year 2262) - returns 1, writes the reason and a
// newline to `err` and nothing to `out`.
int CronNextCommand(std::string_view expr, std::string_view tz, std::string_view from, int count,
                    std::ostream& out, std::ostream& err);

}  // namespace ax::cli
