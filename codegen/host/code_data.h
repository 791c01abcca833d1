// What generated code points at and what therefore lives as long as the
// code: each host backend keeps one CodeData for all the traces it
// compiled.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include "deopt/exit_plan.h"
#include "tracer/trace_ir.h"

namespace tessera::jit {

// Copies of every compiled trace's call targets (the code embeds their
// addresses) and its exit plans (exits that build objects pass their plan's
// address to tessera_jit_restore_exit; the runtime resumes by them). Deques:
// addresses stay stable as traces are added.
struct CodeData {
  std::deque<CallTarget> call_targets;
  std::deque<std::vector<ExitPlan>> exit_plans;
  // Forgets what the last compile added (it failed: nothing refers to it).
  struct Mark {
    size_t calls, plans;
  };
  Mark mark() const { return Mark{call_targets.size(), exit_plans.size()}; }
  void roll_back(Mark m) {
    call_targets.resize(m.calls);
    exit_plans.resize(m.plans);
  }
};

}  // namespace tessera::jit
