// CallFrameStack: the interpreter's activation records, in one fixed array.
//
// The array is sized once from the depth limit, so frames never move: the
// dispatch loop keeps a pointer to the current frame, and compiled traces
// that follow recursion push and pop frames in place through the FrameRegion
// (jit_hooks.h), which this class keeps current.
#pragma once

#include <cstddef>
#include <memory>

#include "vm/core/error.h"
#include "vm/interp/jit_hooks.h"

namespace tessera {

class CallFrameStack {
 public:
  // `depth_limit` frames may be pushed by calls; `slack` more only by trace
  // exits that rebuild inlined frames.
  // A sentinel frame (null proto and pc) sits below frame 0, so that
  // compiled code may read "the caller of the top frame" without first
  // checking that there is one (RETGUARD then fails on the null pc).
  CallFrameStack(size_t depth_limit, size_t slack)
      : frames_(new CallFrame[depth_limit + slack + 1]), capacity_end_(frames_.get() + 1 + depth_limit + slack) {
    frames_[0] = CallFrame{nullptr, nullptr, 0};
    region_.bottom = region_.top = frames_.get() + 1;
    region_.limit = region_.bottom + depth_limit;
  }

  size_t size() const { return static_cast<size_t>(region_.top - region_.bottom); }
  bool empty() const { return region_.top == region_.bottom; }
  CallFrame& back() { return region_.top[-1]; }
  const CallFrame& back() const { return region_.top[-1]; }
  CallFrame& operator[](size_t i) { return region_.bottom[i]; }
  const CallFrame& operator[](size_t i) const { return region_.bottom[i]; }
  const CallFrame* begin() const { return region_.bottom; }
  const CallFrame* end() const { return region_.top; }
  void push_back(const CallFrame& f) {
    if (region_.top == capacity_end_) throw RuntimeError("stack overflow");
    *region_.top++ = f;
  }
  void pop_back() { --region_.top; }
  void clear() { region_.top = region_.bottom; }

  // What compiled code reads and writes (the interpreter also keeps the
  // register-stack fields current).
  FrameRegion& region() { return region_; }

 private:
  std::unique_ptr<CallFrame[]> frames_;
  CallFrame* capacity_end_;
  FrameRegion region_;
};

}  // namespace tessera
