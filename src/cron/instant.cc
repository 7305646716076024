// ParseInstant / FormatInstant (SPEC 3.2): RFC 3339.
#include "ax/instant.h"

#include <cstdint>
#include <cstdio>
#include <string>

#include "cron/civil.h"

namespace ax {
namespace {

using internal::DaysInMonth;

constexpr int64_t kNanosPerSecond = 1'000'000'000;

Status SyntaxError(std::string_view text, std::string_view expected) {
  std::string m = "instant: expected ";
  m += expected;
  m += " in '";
  m += text;
  m += "' (RFC 3339, e.g. 2026-12-24T18:00:00+01:00)";
  return Status::InvalidArgument(std::move(m));
}

Status RangeError(std::string_view what, int value, int lo, int hi, std::string_view suffix = "") {
  std::string m = "instant: ";
  m += what;
  m += ' ';
  m += std::to_string(value);
  m += " is out of range ";
  m += std::to_string(lo);
  m += '-';
  m += std::to_string(hi);
  m += suffix;
  return Status::InvalidArgument(std::move(m));
}

// A cursor over the text that reads fixed-width digit groups and literals.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  bool Digits(int width, int* out) {
    if (s_.size() - pos_ < static_cast<size_t>(width)) return false;
    int v = 0;
    for (int i = 0; i < width; ++i) {
      char c = s_[pos_ + i];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    pos_ += width;
    *out = v;
    return true;
  }
  bool Literal(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool AtEnd() const { return pos_ == s_.size(); }
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void Skip() { ++pos_; }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

struct Fields {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int64_t nanos = 0;
  int offset_seconds = 0;  // local - UTC
};

Status ParseFraction(std::string_view text, Cursor& c, Fields* f) {
  if (!c.Literal('.')) return Status::Ok();
  int digits = 0;
  int64_t nanos = 0;
  while (c.Peek() >= '0' && c.Peek() <= '9') {
    if (++digits > 9) return SyntaxError(text, "at most 9 fractional digits (nanoseconds)");
    nanos = nanos * 10 + (c.Peek() - '0');
    c.Skip();
  }
  if (digits == 0) return SyntaxError(text, "digits after '.'");
  for (int i = digits; i < 9; ++i) nanos *= 10;
  f->nanos = nanos;
  return Status::Ok();
}

Status ParseOffset(std::string_view text, Cursor& c, Fields* f) {
  if (c.Literal('Z') || c.Literal('z')) return Status::Ok();
  const char sign = c.Peek();
  if (sign != '+' && sign != '-') return SyntaxError(text, "'Z' or an offset like +01:00");
  c.Skip();
  int oh = 0, om = 0;
  if (!c.Digits(2, &oh) || !c.Literal(':') || !c.Digits(2, &om))
    return SyntaxError(text, "an offset of the form +HH:MM");
  if (oh > 23) return RangeError("offset hour", oh, 0, 23);
  if (om > 59) return RangeError("offset minute", om, 0, 59);
  f->offset_seconds = (sign == '-' ? -1 : 1) * (oh * 3600 + om * 60);
  return Status::Ok();
}

Status ParseFields(std::string_view text, Fields* f) {
  Cursor c(text);
  if (!c.Digits(4, &f->year) || !c.Literal('-') || !c.Digits(2, &f->month) || !c.Literal('-') ||
      !c.Digits(2, &f->day)) {
    return SyntaxError(text, "a date YYYY-MM-DD");
  }
  if (!c.Literal('T') && !c.Literal('t') && !c.Literal(' '))
    return SyntaxError(text, "'T' between date and time");
  if (!c.Digits(2, &f->hour) || !c.Literal(':') || !c.Digits(2, &f->minute) || !c.Literal(':') ||
      !c.Digits(2, &f->second)) {
    return SyntaxError(text, "a time HH:MM:SS");
  }
  AX_RETURN_IF_ERROR(ParseFraction(text, c, f));
  AX_RETURN_IF_ERROR(ParseOffset(text, c, f));
  if (!c.AtEnd()) return SyntaxError(text, "nothing after the offset");
  return Status::Ok();
}

Status CheckRanges(const Fields& f) {
  if (f.month < 1 || f.month > 12) return RangeError("month", f.month, 1, 12);
  const int dim = DaysInMonth(f.year, f.month);
  if (f.day < 1 || f.day > dim) {
    char ym[16];
    std::snprintf(ym, sizeof ym, "%04d-%02d", f.year, f.month);
    return RangeError("day", f.day, 1, dim, std::string(" for ") + ym);
  }
  if (f.hour > 23) return RangeError("hour", f.hour, 0, 23);
  if (f.minute > 59) return RangeError("minute", f.minute, 0, 59);
  if (f.second == 60) {
    return Status::InvalidArgument(
        "instant: second 60 (a leap second) cannot be represented in Unix time; use :59");
  }
  if (f.second > 59) return RangeError("second", f.second, 0, 59);
  return Status::Ok();
}

std::string FormatWholeSeconds(int64_t secs) {
  const internal::CivilSecond c = internal::SplitLocalSeconds(secs);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02d", static_cast<long long>(c.year),
                c.month, c.day, c.hour, c.minute, c.second);
  return buf;
}

}  // namespace

Result<Instant> ParseInstant(std::string_view text) {
  Fields f;
  AX_RETURN_IF_ERROR(ParseFields(text, &f));
  AX_RETURN_IF_ERROR(CheckRanges(f));
  const int64_t local = internal::JoinLocalSeconds(
      {f.year, f.month, f.day, f.hour, f.minute, f.second});  // years 0-9999: no overflow
  int64_t secs = local - f.offset_seconds;
  int64_t nanos = f.nanos;
  if (secs < 0 && nanos > 0) {  // near the minimum only secs + fraction fits, not secs alone
    secs += 1;
    nanos -= kNanosPerSecond;
  }
  int64_t ns = 0;
  if (__builtin_mul_overflow(secs, kNanosPerSecond, &ns) ||
      __builtin_add_overflow(ns, nanos, &ns)) {
    return Status::InvalidArgument(
        "instant: '" + std::string(text) +
        "' is outside the representable range 1677-09-21T00:12:43.145224192Z to "
        "2262-04-11T23:47:16.854775807Z");
  }
  return FromUnixNanos(ns);
}

std::string FormatInstantSeconds(Instant t) {
  return FormatWholeSeconds(internal::FloorDiv(ToUnixNanos(t), kNanosPerSecond)) + "Z";
}

std::string FormatInstant(Instant t) {
  const int64_t ns = ToUnixNanos(t);
  const int64_t secs = internal::FloorDiv(ns, kNanosPerSecond);
  const int64_t frac = internal::FloorMod(ns, kNanosPerSecond);
  std::string out = FormatWholeSeconds(secs);
  if (frac != 0) {
    char digits[16];
    std::snprintf(digits, sizeof digits, ".%09lld", static_cast<long long>(frac));
    std::string_view d = digits;
    while (d.back() == '0') d.remove_suffix(1);
    out += d;
  }
  out += 'Z';
  return out;
}

}  // namespace ax
