// ParseDuration / FormatDuration (SPEC 3.1).
#include "ax/duration.h"

#include <array>
#include <cstdint>
#include <numeric>
#include <string>

namespace ax {
namespace {

constexpr int64_t kNs = 1;
constexpr int64_t kUs = 1000 * kNs;
constexpr int64_t kMs = 1000 * kUs;
constexpr int64_t kSec = 1000 * kMs;
constexpr int64_t kMin = 60 * kSec;
constexpr int64_t kHour = 60 * kMin;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kWeek = 7 * kDay;

Status Error(std::string_view text, std::string_view reason) {
  std::string m = "duration: ";
  m += reason;
  m += " in '";
  m += text;
  m += "'";
  return Status::InvalidArgument(std::move(m));
}

// A decimal number "123" or "1.25" split into its integer and fraction digits.
struct Number {
  std::string_view whole;
  std::string_view fraction;
  bool has_point = false;
};

// Reads digits [. digits] from the front of `s`; returns false if no digit.
bool ReadNumber(std::string_view& s, bool allow_comma, Number* out) {
  size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  out->whole = s.substr(0, i);
  if (i < s.size() && (s[i] == '.' || (allow_comma && s[i] == ','))) {
    out->has_point = true;
    size_t j = i + 1;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    out->fraction = s.substr(i + 1, j - i - 1);
    i = j;
  }
  if (out->whole.empty() && out->fraction.empty()) return false;  // consume nothing
  s.remove_prefix(i);
  return true;
}

// n * unit in nanoseconds, exactly.
enum class Scale { kOk, kOverflow, kTooFine, kTooManyDigits };
Scale ScaleNumber(const Number& n, int64_t unit, int64_t* out) {
  int64_t whole = 0;
  for (char c : n.whole) {
    if (__builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, c - '0', &whole))
      return Scale::kOverflow;
  }
  if (__builtin_mul_overflow(whole, unit, &whole)) return Scale::kOverflow;
  std::string_view f = n.fraction;
  while (!f.empty() && f.back() == '0') f.remove_suffix(1);
  int64_t frac = 0;
  if (!f.empty()) {
    if (f.size() > 18) return Scale::kTooManyDigits;
    int64_t num = 0;
    int64_t den = 1;
    for (char c : f) {
      num = num * 10 + (c - '0');
      den *= 10;
    }
    // num / den < 1, so the result is below `unit`. It is a whole number of
    // nanoseconds exactly when den / gcd(unit, den) divides num.
    const int64_t g = std::gcd(unit, den);
    const int64_t reduced_den = den / g;
    if (num % reduced_den != 0) return Scale::kTooFine;
    frac = num / reduced_den * (unit / g);
  }
  if (__builtin_add_overflow(whole, frac, out)) return Scale::kOverflow;
  return Scale::kOk;
}

// Adds n * unit to *total or returns why it cannot.
Status Accumulate(std::string_view text, const Number& n, int64_t unit, int64_t* total) {
  int64_t v = 0;
  switch (ScaleNumber(n, unit, &v)) {
    case Scale::kTooFine:
      return Error(text, "value is finer than 1ns");
    case Scale::kTooManyDigits:
      return Error(text, "fraction has more than 18 significant digits");
    case Scale::kOverflow:
      break;
    case Scale::kOk:
      if (!__builtin_add_overflow(*total, v, total)) return Status::Ok();
      break;
  }
  return Error(text, "value overflows the maximum duration (about 292 years)");
}

struct Unit {
  std::string_view name;
  int64_t ns;
};
// Ordered from largest to smallest; longer names first where a prefix clashes
// ("ms" before "m" is handled by matching whole unit tokens).
constexpr std::array<Unit, 7> kShortUnits = {{
    {"d", kDay},
    {"h", kHour},
    {"m", kMin},
    {"s", kSec},
    {"ms", kMs},
    {"us", kUs},
    {"ns", kNs},
}};

Result<Duration> ParseShort(std::string_view text) {
  if (text == "0") return Duration(0);
  std::string_view s = text;
  int64_t total = 0;
  int last_rank = -1;
  while (!s.empty()) {
    Number n;
    if (!ReadNumber(s, /*allow_comma=*/false, &n)) return Error(text, "expected a number");
    if (n.has_point && (n.whole.empty() || n.fraction.empty()))
      return Error(text, "a decimal point needs digits on both sides");
    size_t u = 0;
    while (u < s.size() && ((s[u] >= 'a' && s[u] <= 'z') || (s[u] >= 'A' && s[u] <= 'Z'))) ++u;
    std::string_view unit_name = s.substr(0, u);
    s.remove_prefix(u);
    if (unit_name.empty()) return Error(text, "missing unit (one of ns, us, ms, s, m, h, d)");
    int rank = -1;
    for (size_t i = 0; i < kShortUnits.size(); ++i) {
      if (kShortUnits[i].name == unit_name) rank = static_cast<int>(i);
    }
    if (rank < 0) {
      return Error(text, "unknown unit '" + std::string(unit_name) +
                             "' (expected ns, us, ms, s, m, h or d)");
    }
    if (rank <= last_rank) {
      return Error(text, "unit '" + std::string(unit_name) +
                             "' repeated or out of order (write larger units first)");
    }
    last_rank = rank;
    AX_RETURN_IF_ERROR(Accumulate(text, n, kShortUnits[rank].ns, &total));
  }
  return Duration(total);
}

// The rank (D/W=0, H=1, M=2, S=3) and length of an ISO 8601 designator.
Status IsoUnit(std::string_view text, char designator, bool in_time, int* rank, int64_t* unit) {
  struct Designator {
    char c;
    bool in_time;
    int rank;
    int64_t unit;
  };
  constexpr Designator kDesignators[] = {{'W', false, 0, kWeek},
                                         {'D', false, 0, kDay},
                                         {'H', true, 1, kHour},
                                         {'M', true, 2, kMin},
                                         {'S', true, 3, kSec}};
  for (const Designator& d : kDesignators) {
    if (d.c == designator && d.in_time == in_time) {
      *rank = d.rank;
      *unit = d.unit;
      return Status::Ok();
    }
  }
  if (!in_time && designator == 'Y')
    return Error(text, "years (Y) have no fixed length; use days (D)");
  if (!in_time && designator == 'M') {
    return Error(text, "months (M before T) have no fixed length; use days (D)");
  }
  return Error(text, "unexpected designator '" + std::string(1, designator) +
                         (in_time ? "' after T (expected H, M or S)" : "' (expected D, W or T)"));
}

// Reads one `<number><designator>` component of an ISO 8601 duration.
Status ReadIsoComponent(std::string_view text, std::string_view& s, Number* n, char* designator) {
  if (!ReadNumber(s, /*allow_comma=*/true, n)) {
    if (s.front() == '-') return Error(text, "negative durations are not allowed");
    if (s.front() == '+') return Error(text, "a sign is not allowed");
    return Error(text, "expected a number before '" + std::string(1, s.front()) + "'");
  }
  if (n->has_point && (n->whole.empty() || n->fraction.empty()))
    return Error(text, "a decimal point needs digits on both sides");
  if (s.empty()) return Error(text, "number without a designator at the end");
  *designator = s.front();
  s.remove_prefix(1);
  return Status::Ok();
}

// ISO 8601: P[nD][T[nH][nM][nS]] or PnW.
Result<Duration> ParseIso(std::string_view text) {
  std::string_view s = text.substr(1);  // after 'P'
  if (s.empty()) return Error(text, "'P' must be followed by at least one component");
  int64_t total = 0;
  bool in_time = false;
  bool saw_fraction = false;
  int components = 0;
  int64_t last_unit = 0;
  int last_rank = -1;
  while (!s.empty()) {
    if (s.front() == 'T') {
      if (in_time) return Error(text, "'T' appears twice");
      in_time = true;
      s.remove_prefix(1);
      if (s.empty()) return Error(text, "'T' must be followed by at least one component");
      continue;
    }
    if (saw_fraction) return Error(text, "only the last component may have a fraction");
    Number n;
    char designator = 0;
    AX_RETURN_IF_ERROR(ReadIsoComponent(text, s, &n, &designator));
    int rank = -1;
    int64_t unit = 0;
    AX_RETURN_IF_ERROR(IsoUnit(text, designator, in_time, &rank, &unit));
    if (components > 0 && (unit == kWeek || last_unit == kWeek))
      return Error(text, "weeks (W) cannot be combined with other components");
    if (rank <= last_rank) return Error(text, "components repeated or out of order");
    last_rank = rank;
    last_unit = unit;
    ++components;
    saw_fraction = n.has_point;
    AX_RETURN_IF_ERROR(Accumulate(text, n, unit, &total));
  }
  return Duration(total);
}

}  // namespace

Result<Duration> ParseDuration(std::string_view text) {
  if (text.empty()) return Status::InvalidArgument("duration: empty text");
  if (text.front() == '-' || text.front() == '+') {
    if (text.front() == '-') return Error(text, "negative durations are not allowed");
    return Error(text, "a sign is not allowed");
  }
  if (text.front() == 'P') return ParseIso(text);
  if (text.front() == 'p') return Error(text, "ISO 8601 durations start with an uppercase 'P'");
  return ParseShort(text);
}

std::string FormatDuration(Duration d) {
  int64_t v = d.count();
  if (v == 0) return "0s";
  std::string out;
  uint64_t u;
  if (v < 0) {
    out += '-';
    u = static_cast<uint64_t>(-(v + 1)) + 1;  // |INT64_MIN| without overflow
  } else {
    u = static_cast<uint64_t>(v);
  }
  struct Part {
    uint64_t ns;
    const char* name;
  };
  constexpr Part kParts[] = {{kDay, "d"}, {kHour, "h"}, {kMin, "m"}, {kSec, "s"},
                             {kMs, "ms"}, {kUs, "us"},  {kNs, "ns"}};
  for (const Part& p : kParts) {
    uint64_t q = u / p.ns;
    u %= p.ns;
    if (q != 0) {
      out += std::to_string(q);
      out += p.name;
    }
  }
  return out;
}

}  // namespace ax
