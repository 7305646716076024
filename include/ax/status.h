// File: ax/status.h
//
// Errors are values in ax: every public call returns an `ax::Status` or an
// `ax::Result<T>` (a T or a non-OK Status) and never throws.
//
// Example:
//   ax::Result<ax::JobId> id = scheduler->After(30min, [] { CloseOrder(); });
//   if (!id.ok()) std::cerr << id.status().ToString() << "\n";
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ax {

// What went wrong. The codes say whether retrying can help:
//   kInvalidArgument, kInvalidState, kNotFound, kAlreadyExists: fix the call
//     or the job's state first; retrying the same call gives the same answer.
//   kShuttingDown: the scheduler is going away; retry elsewhere.
//   kDeadlineExceeded, kUnavailable: transient; a retry policy retries them.
//   kInternal: a callback threw, or an invariant broke.
enum class StatusCode : uint8_t {
  kOk = 0,
  kNotFound,
  kAlreadyExists,
  kInvalidState,
  kInvalidArgument,
  kShuttingDown,
  kDeadlineExceeded,
  kUnavailable,
  kCancelled,
  kInternal,
};

// Name of a code, e.g. "InvalidArgument".
std::string_view StatusCodeName(StatusCode code);

// Status: OK, or an error code with a message a person can act on.
// Thread-compatible value type.
class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  // An OK code keeps no message.
  Status(StatusCode code, std::string message)
      : rep_(code == StatusCode::kOk ? nullptr
                                     : std::make_unique<const Rep>(Rep{code, std::move(message)})) {
  }
  Status(const Status& o) : rep_(o.rep_ ? std::make_unique<const Rep>(*o.rep_) : nullptr) {}
  Status& operator=(const Status& o) {
    if (this != &o) rep_ = o.rep_ ? std::make_unique<const Rep>(*o.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status Ok() { return {}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status InvalidState(std::string m) { return {StatusCode::kInvalidState, std::move(m)}; }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status ShuttingDown(std::string m) { return {StatusCode::kShuttingDown, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) {
    return {StatusCode::kDeadlineExceeded, std::move(m)};
  }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  const std::string& message() const { return rep_ ? rep_->message : EmptyMessage(); }
  // "OK" or "<CodeName>: <message>".
  std::string ToString() const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  static const std::string& EmptyMessage();

  // Null when OK: an OK status is one word, made and checked without
  // touching memory (every call and every run returns one).
  std::unique_ptr<const Rep> rep_;
};

// Result<T>: either a value or a non-OK Status. Members mirror the parts of
// C++23 std::expected that ax uses, so migrating later is mechanical.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::in_place_index<1>, std::move(status)) {  // NOLINT
    assert(!std::get<1>(v_).ok() && "a Result holding a Status must hold an error");
  }

  bool ok() const { return v_.index() == 0; }
  bool has_value() const { return ok(); }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // OK when a value is held, the error otherwise.
  Status status() const { return ok() ? Status() : std::get<1>(v_); }
  // REQUIRES: !ok().
  const Status& error() const { return std::get<1>(v_); }

  template <class U>
  T value_or(U&& other) const& {
    return ok() ? value() : static_cast<T>(std::forward<U>(other));
  }

 private:
  std::variant<T, Status> v_;
};

}  // namespace ax

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define AX_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::ax::Status ax_status_ = (expr);        \
    if (!ax_status_.ok()) return ax_status_; \
  } while (false)
