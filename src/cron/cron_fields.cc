// Parsing of the cron fields (SPEC 3.3) into bit sets.
#include "cron/cron_fields.h"

#include <string>
#include <vector>

namespace ax::internal {
namespace {

constexpr std::string_view kMonthNames[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                            "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::string_view kDayNames[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

enum class Kind { kSecond, kMinute, kHour, kDayOfMonth, kMonth, kDayOfWeek };

struct FieldSpec {
  Kind kind;
  std::string_view name;
  int min;
  int max;
  const std::string_view* names = nullptr;  // names[i] means name_base + i
  int name_count = 0;
  int name_base = 0;
};

constexpr FieldSpec kSecond{Kind::kSecond, "second", 0, 59};
constexpr FieldSpec kMinute{Kind::kMinute, "minute", 0, 59};
constexpr FieldSpec kHour{Kind::kHour, "hour", 0, 23};
constexpr FieldSpec kDayOfMonth{Kind::kDayOfMonth, "day-of-month", 1, 31};
constexpr FieldSpec kMonth{Kind::kMonth, "month", 1, 12, kMonthNames, 12, 1};
constexpr FieldSpec kDayOfWeek{Kind::kDayOfWeek, "day-of-week", 0, 7, kDayNames, 7, 0};

Status FieldError(const FieldSpec& f, std::string_view reason) {
  std::string m(f.name);
  m += ": ";
  m += reason;
  return Status::InvalidArgument(std::move(m));
}

std::string Quote(std::string_view s) {
  std::string q(1, '\'');
  q += s;
  q += '\'';
  return q;
}

char Upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

bool EqualsUpper(std::string_view a, std::string_view upper) {
  if (a.size() != upper.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Upper(a[i]) != upper[i]) return false;
  }
  return true;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// REQUIRES: AllDigits(s). Leading zeros count for nothing (0000005 is 5); a
// value past 999,999 comes back as 1,000,000, outside every field's range.
int ToInt(std::string_view s) {
  int v = 0;
  for (char c : s) {
    v = v * 10 + (c - '0');
    if (v > 999'999) return 1'000'000;
  }
  return v;
}

std::string OutOfRange(std::string_view value, int lo, int hi) {
  return std::string(value) + " is out of range " + std::to_string(lo) + "-" + std::to_string(hi);
}

// A plain number within [lo, hi].
Status ParseNumber(const FieldSpec& f, std::string_view tok, int lo, int hi, int* out) {
  if (!AllDigits(tok)) return FieldError(f, "invalid number " + Quote(tok));
  const int v = ToInt(tok);
  if (v < lo || v > hi) return FieldError(f, OutOfRange(tok, lo, hi));
  *out = v;
  return Status::Ok();
}

// A value of the field: a number or (month, day-of-week) a name.
Status ParseValue(const FieldSpec& f, std::string_view tok, std::string_view element, int* out) {
  if (tok.empty()) return FieldError(f, "missing value in " + Quote(element));
  if (AllDigits(tok)) return ParseNumber(f, tok, f.min, f.max, out);
  for (int i = 0; i < f.name_count; ++i) {
    if (EqualsUpper(tok, f.names[i])) {
      *out = f.name_base + i;
      return Status::Ok();
    }
  }
  if (f.name_count > 0) {
    return FieldError(f, "unknown name " + Quote(tok) +
                             (f.kind == Kind::kMonth ? " (expected 1-12 or JAN-DEC)"
                                                     : " (expected 0-7 or SUN-SAT)"));
  }
  return FieldError(f, "invalid value " + Quote(tok));
}

// `*`, `a`, `a-b`, each optionally followed by `/step`, into bits of *mask.
Status ParseRange(const FieldSpec& f, std::string_view el, uint64_t* mask) {
  std::string_view base = el;
  std::string_view step_text;
  const size_t slash = el.find('/');
  if (slash != std::string_view::npos) {
    base = el.substr(0, slash);
    step_text = el.substr(slash + 1);
  }
  int lo = f.min;
  int hi = f.max;
  if (base != "*") {
    const size_t dash = base.find('-');
    AX_RETURN_IF_ERROR(ParseValue(f, base.substr(0, dash), el, &lo));
    if (dash != std::string_view::npos) {
      const std::string_view end_text = base.substr(dash + 1);
      AX_RETURN_IF_ERROR(ParseValue(f, end_text, el, &hi));
      // SAT-SUN: a Sunday named at the end of a range is day 7.
      if (f.kind == Kind::kDayOfWeek && hi == 0 && lo > 0 && !AllDigits(end_text)) hi = 7;
      if (lo > hi) return FieldError(f, "range " + std::string(base) + " is reversed");
    } else if (slash == std::string_view::npos) {
      hi = lo;
    }
  }
  int step = 1;
  if (slash != std::string_view::npos) {
    if (step_text.empty()) return FieldError(f, "missing step after '/' in " + Quote(el));
    if (!AllDigits(step_text)) return FieldError(f, "invalid step in " + Quote(el));
    if (step_text.find_first_not_of('0') == std::string_view::npos)
      return FieldError(f, "step must be at least 1 in " + Quote(el));
    const int max_step = f.max - f.min;
    if ((step = ToInt(step_text)) > max_step)
      return FieldError(f, "step " + OutOfRange(step_text, 1, max_step) + " in " + Quote(el));
  }
  for (int v = lo; v <= hi; v += step) {
    const int bit = (f.kind == Kind::kDayOfWeek && v == 7) ? 0 : v;
    *mask |= uint64_t{1} << bit;
  }
  return Status::Ok();
}

// L, LW, nW or a range, in day-of-month.
Status ParseDomElement(std::string_view el, CronFields* out) {
  const FieldSpec& f = kDayOfMonth;
  if (EqualsUpper(el, "L")) {
    out->dom_last = true;
    return Status::Ok();
  }
  if (EqualsUpper(el, "LW")) {
    out->dom_last_weekday = true;
    return Status::Ok();
  }
  if (Upper(el.back()) == 'W') {
    const std::string_view day = el.substr(0, el.size() - 1);
    if (day.empty()) return FieldError(f, "'W' needs a day before it (e.g. 15W)");
    int n = 0;
    AX_RETURN_IF_ERROR(ParseNumber(f, day, 1, 31, &n));
    out->dom_nearest_weekday |= uint32_t{1} << n;
    return Status::Ok();
  }
  uint64_t mask = 0;
  AX_RETURN_IF_ERROR(ParseRange(f, el, &mask));
  out->dom_days |= static_cast<uint32_t>(mask);
  return Status::Ok();
}

// nL, n#k or a range, in day-of-week.
Status ParseDowElement(std::string_view el, CronFields* out) {
  const FieldSpec& f = kDayOfWeek;
  if (EqualsUpper(el, "L")) {
    return FieldError(f, "bare 'L' is ambiguous; write nL (e.g. 5L = the last Friday)");
  }
  const size_t hash = el.find('#');
  if (hash != std::string_view::npos) {
    int day = 0;
    int k = 0;
    AX_RETURN_IF_ERROR(ParseValue(f, el.substr(0, hash), el, &day));
    const std::string_view nth = el.substr(hash + 1);
    if (nth.empty()) return FieldError(f, "missing occurrence after '#' in " + Quote(el));
    if (!AllDigits(nth)) return FieldError(f, "invalid occurrence in " + Quote(el));
    if ((k = ToInt(nth)) < 1 || k > 5)
      return FieldError(f, "occurrence " + OutOfRange(nth, 1, 5) + " in " + Quote(el));
    out->dow_nth[day % 7] |= static_cast<uint8_t>(1u << k);
    return Status::Ok();
  }
  if (el.size() > 1 && Upper(el.back()) == 'L') {
    int day = 0;
    AX_RETURN_IF_ERROR(ParseValue(f, el.substr(0, el.size() - 1), el, &day));
    out->dow_last |= static_cast<uint8_t>(1u << (day % 7));
    return Status::Ok();
  }
  uint64_t mask = 0;
  AX_RETURN_IF_ERROR(ParseRange(f, el, &mask));
  out->dow_days |= static_cast<uint8_t>(mask);
  return Status::Ok();
}

// One field: a comma-separated list of elements.
Status ParseField(const FieldSpec& f, std::string_view text, CronFields* out, uint64_t* mask) {
  const bool day_field = f.kind == Kind::kDayOfMonth || f.kind == Kind::kDayOfWeek;
  if (text == "*" || (day_field && text == "?")) {
    if (f.kind == Kind::kDayOfMonth) out->dom_any = true;
    if (f.kind == Kind::kDayOfWeek) out->dow_any = true;
    if (!day_field) AX_RETURN_IF_ERROR(ParseRange(f, text, mask));
    return Status::Ok();
  }
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view el = text.substr(start, comma - start);
    if (el.empty()) return FieldError(f, "empty element in list " + Quote(text));
    if (el.find('?') != std::string_view::npos) {
      return FieldError(f, day_field ? "'?' must stand alone"
                                     : "'?' is only allowed in day-of-month and day-of-week");
    }
    if (f.kind == Kind::kDayOfMonth) {
      AX_RETURN_IF_ERROR(ParseDomElement(el, out));
    } else if (f.kind == Kind::kDayOfWeek) {
      AX_RETURN_IF_ERROR(ParseDowElement(el, out));
    } else {
      AX_RETURN_IF_ERROR(ParseRange(f, el, mask));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return Status::Ok();
}

std::vector<std::string_view> SplitFields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsCronSpace(s[i])) ++i;
    size_t j = i;
    while (j < s.size() && !IsCronSpace(s[j])) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// OK when some day of some month allowed by the month field matches.
Status CheckCanFire(const CronFields& f, const DayTable& table, std::string_view dom_text,
                    std::string_view month_text) {
  for (int m = 1; m <= 12; ++m) {
    if ((f.months >> m & 1) == 0) continue;
    // Every month starts on every weekday within the 400-year Gregorian cycle;
    // February has 28 or 29 days.
    const int lo = m == 2 ? 28 : (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
    const int hi = m == 2 ? 29 : lo;
    for (int len = lo; len <= hi; ++len) {
      for (int wd = 0; wd < 7; ++wd) {
        if (table[len - 28][wd] != 0) return Status::Ok();
      }
    }
  }
  return Status::InvalidArgument("day-of-month: " + Quote(dom_text) +
                                 " never matches a day of month " + Quote(month_text) +
                                 ", so the expression can never fire");
}

}  // namespace

Result<CronFields> ParseCronFields(std::string_view expr) {
  const std::vector<std::string_view> parts = SplitFields(expr);
  if (parts.size() != 5 && parts.size() != 6) {
    return Status::InvalidArgument(
        "cron: expected 5 fields (minute hour day-of-month month day-of-week) or 6 with a "
        "leading second, got " +
        std::to_string(parts.size()));
  }
  CronFields out;
  const size_t off = parts.size() - 5;
  uint64_t mask = 0;
  if (off == 1) {
    AX_RETURN_IF_ERROR(ParseField(kSecond, parts[0], &out, &mask));
    out.seconds = mask;
  } else {
    out.seconds = 1;  // second 0
  }
  mask = 0;
  AX_RETURN_IF_ERROR(ParseField(kMinute, parts[off], &out, &mask));
  out.minutes = mask;
  mask = 0;
  AX_RETURN_IF_ERROR(ParseField(kHour, parts[off + 1], &out, &mask));
  out.hours = static_cast<uint32_t>(mask);
  AX_RETURN_IF_ERROR(ParseField(kDayOfMonth, parts[off + 2], &out, &mask));
  mask = 0;
  AX_RETURN_IF_ERROR(ParseField(kMonth, parts[off + 3], &out, &mask));
  out.months = static_cast<uint16_t>(mask);
  AX_RETURN_IF_ERROR(ParseField(kDayOfWeek, parts[off + 4], &out, &mask));
  out.interval = (off == 1 && parts[0].front() == '*') || parts[off].front() == '*' ||
                 parts[off + 1].front() == '*';
  for (int len = 28; len <= 31; ++len) {
    for (int wd = 0; wd < 7; ++wd) out.days[len - 28][wd] = DayMask(out, len, wd);
  }
  AX_RETURN_IF_ERROR(CheckCanFire(out, out.days, parts[off + 2], parts[off + 3]));
  return out;
}

uint32_t DayMask(const CronFields& f, int month_length, int first_weekday) {
  const auto weekday = [&](int day) { return (first_weekday + day - 1) % 7; };
  const uint32_t all = ((uint32_t{1} << month_length) - 1) << 1;
  uint32_t dom = f.dom_days & all;
  if (f.dom_last) dom |= uint32_t{1} << month_length;
  if (f.dom_last_weekday) {
    const int wd = weekday(month_length);
    dom |= uint32_t{1} << (month_length - (wd == 6 ? 1 : wd == 0 ? 2 : 0));
  }
  for (int n = 1; n <= month_length; ++n) {
    if ((f.dom_nearest_weekday >> n & 1) == 0) continue;
    // The weekday nearest to day n without leaving the month.
    int d = n;
    if (weekday(n) == 6) d = n == 1 ? 3 : n - 1;
    if (weekday(n) == 0) d = n == month_length ? n - 2 : n + 1;
    dom |= uint32_t{1} << d;
  }
  uint32_t dow = 0;
  for (int d = 1; d <= month_length; ++d) {
    const int wd = weekday(d);
    const bool nth = (f.dow_nth[wd] >> ((d - 1) / 7 + 1) & 1) != 0;
    const bool last = (f.dow_last >> wd & 1) != 0 && d + 7 > month_length;
    if ((f.dow_days >> wd & 1) != 0 || nth || last) dow |= uint32_t{1} << d;
  }
  if (f.dom_any && f.dow_any) return all;
  if (f.dom_any) return dow;
  if (f.dow_any) return dom;
  return dom | dow;  // Vixie: both restricted, either matches
}

}  // namespace ax::internal
