// File: ax/job_id.h
//
// `ax::JobId` is the engine's handle to a job: a slot and a generation, so a
// stale id (of a job long gone) is refused with NotFound, never confused with
// a new job. Its text form is "#<slot>.<generation>". Jobs may also carry a
// key chosen by the caller ("order-1001"); `ax::JobRef` accepts either, so
// every call takes an id or a key.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ax {

class JobId {
 public:
  constexpr JobId() = default;
  constexpr JobId(uint32_t slot, uint32_t generation)
      : raw_(static_cast<uint64_t>(slot) << 32 | generation) {}

  constexpr uint32_t slot() const { return static_cast<uint32_t>(raw_ >> 32); }
  constexpr uint32_t generation() const { return static_cast<uint32_t>(raw_); }
  constexpr uint64_t raw() const { return raw_; }
  // Generation 0 is never issued: a default JobId names no job.
  constexpr bool valid() const { return generation() != 0; }

  // "#<slot>.<generation>".
  std::string ToString() const;
  // Parses the text form; nullopt when `s` is not one.
  static std::optional<JobId> Parse(std::string_view s);

  friend constexpr bool operator==(JobId a, JobId b) { return a.raw_ == b.raw_; }

 private:
  uint64_t raw_ = 0;
};

// A job named by its id or by its key (or by the id's text form).
// Non-owning: the referenced string must outlive the call.
class JobRef {
 public:
  JobRef(JobId id) : word_(id.raw()) {}  // NOLINT: implicit by design
  // An empty key names no job, like a default JobId.
  JobRef(std::string_view key)  // NOLINT
      : key_(key.empty() ? nullptr : key.data()), word_(key.size()) {}
  JobRef(const std::string& key) : JobRef(std::string_view(key)) {}  // NOLINT
  JobRef(const char* key) : JobRef(std::string_view(key)) {}         // NOLINT

  bool is_id() const { return key_ == nullptr; }
  JobId id() const {
    return is_id() ? JobId(static_cast<uint32_t>(word_ >> 32), static_cast<uint32_t>(word_))
                   : JobId();
  }
  std::string_view key() const {
    return is_id() ? std::string_view() : std::string_view(key_, word_);
  }

 private:
  // 16 bytes, so that it is passed in two registers. Passed in memory (as a
  // JobId beside a string_view was), the caller's id went through a store
  // that the callee's lock had to wait for, and a caller's cache miss on the
  // id could no longer overlap the next call's: a cancel that only marks the
  // record took twice as long (W1, a million jobs).
  const char* key_ = nullptr;  // null: the ref is an id
  uint64_t word_ = 0;          // the id's raw bits, or the key's length
};

}  // namespace ax

template <>
struct std::hash<ax::JobId> {
  size_t operator()(ax::JobId id) const noexcept { return std::hash<uint64_t>()(id.raw()); }
};
