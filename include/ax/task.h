// File: ax/task.h
//
// `ax::Task` holds the function a job runs: any callable with one of the
// signatures
//     void()      void(const ax::RunContext&)
//     ax::Status()      ax::Status(const ax::RunContext&)
// A callable whose captures fit in 16 bytes is stored inline (no allocation);
// larger ones are moved to the heap once, at submission. A run fails when the
// callable throws or returns a non-OK Status (SPEC 2.6).
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "ax/run_context.h"
#include "ax/status.h"

namespace ax {

namespace internal {
struct TaskAccess;
}  // namespace internal

class Task {
 public:
  Task() = default;
  template <class F, class D = std::decay_t<F>,
            class = std::enable_if_t<!std::is_same_v<D, Task> &&
                                     (std::is_invocable_v<D&> ||
                                      std::is_invocable_v<D&, const RunContext&>)>>
  Task(F&& f) : ops_(&OpsFor<D>::kOps) {  // NOLINT: implicit from any callable
    if constexpr (kInline<D>) {
      ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
    } else {
      *reinterpret_cast<D**>(buf_) = new D(std::forward<F>(f));
    }
  }
  Task(Task&& o) noexcept : ops_(o.ops_) { MoveFrom(o); }
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      Reset();
      ops_ = o.ops_;
      MoveFrom(o);
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { Reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  // Destroys the callable (and so its captures) now.
  void Reset() {
    if (ops_ != nullptr && ops_->destroy != nullptr) ops_->destroy(buf_);
    ops_ = nullptr;
  }
  // Runs the callable. Exceptions propagate; the engine catches them.
  // REQUIRES: *this holds a callable.
  Status operator()(const RunContext& ctx) { return ops_->invoke(buf_, ctx); }

 private:
  friend struct internal::TaskAccess;  // the engine's cancel (scheduler_impl.cc)
  static constexpr size_t kBufSize = 16;
  template <class D>
  static constexpr bool kInline =
      sizeof(D) <= kBufSize &&
      alignof(D) <= alignof(void*) && std::is_nothrow_move_constructible_v<D>;
  // `move` and `destroy` are null where a copy of the bytes moves the
  // callable and nothing needs destroying: most callables (a lambda that
  // captures pointers and numbers, or one on the heap, whose pointer moves).
  // The engine moves a task on every submission and every end of a job.
  struct Ops {
    Status (*invoke)(void*, const RunContext&);
    void (*move)(void* dst, void* src);
    void (*destroy)(void*);
  };
  // Takes o's callable; ops_ is o's already.
  void MoveFrom(Task& o) noexcept {
    if (ops_ != nullptr) {
      if (ops_->move != nullptr) {
        ops_->move(buf_, o.buf_);
      } else {
        __builtin_memcpy(buf_, o.buf_, kBufSize);
      }
    }
    o.ops_ = nullptr;
  }
  template <class D>
  static constexpr bool kTrivial = kInline<D>&& std::is_trivially_copyable_v<D>;
  template <class D>
  static D& Get(void* p) {
    if constexpr (kInline<D>) {
      return *std::launder(reinterpret_cast<D*>(p));
    } else {
      return **reinterpret_cast<D**>(p);
    }
  }
  template <class D>
  static Status Call(D& f, const RunContext& ctx) {
    if constexpr (std::is_invocable_v<D&, const RunContext&>) {
      if constexpr (std::is_convertible_v<std::invoke_result_t<D&, const RunContext&>, Status>) {
        return f(ctx);
      } else {
        f(ctx);
        return Status();
      }
    } else {
      if constexpr (std::is_convertible_v<std::invoke_result_t<D&>, Status>) {
        return f();
      } else {
        f();
        return Status();
      }
    }
  }
  template <class D>
  static void Move(void* dst, void* src) {
    ::new (dst) D(std::move(Get<D>(src)));
    Get<D>(src).~D();
  }
  template <class D>
  static void Destroy(void* p) {
    if constexpr (kInline<D>) {
      Get<D>(p).~D();
    } else {
      delete *reinterpret_cast<D**>(p);
    }
  }
  template <class D>
  static constexpr Ops MakeOps() {
    Ops ops{[](void* p, const RunContext& ctx) { return Call(Get<D>(p), ctx); }, nullptr, nullptr};
    // A heap callable moves with its pointer: a copy of the bytes.
    if constexpr (kInline<D> && !kTrivial<D>) ops.move = &Move<D>;
    if constexpr (!kTrivial<D>) ops.destroy = &Destroy<D>;
    return ops;
  }
  template <class D>
  struct OpsFor {
    static constexpr Ops kOps = MakeOps<D>();
  };

  const Ops* ops_ = nullptr;
  alignas(void*) unsigned char buf_[kBufSize] = {};
};

}  // namespace ax
