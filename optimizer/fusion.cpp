#include "optimizer/fusion.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "optimizer/deferred_writes.h"
#include "optimizer/ir_rewrite.h"
#include "tracer/graph_binding.h"
#include "tracer/ir_operands.h"
#include "vm/graph/region.h"

namespace tessera::jit {

namespace {

class Fuser {
 public:
  explicit Fuser(TraceIR& ir) : ir_(ir), writes_(ir), subst_(identity_subst(ir)), before_(ir.size()), moved_(ir.size()) {
    // Values a guard pins to a constant (GUARDT of x == K): the recorder's
    // pins of an attribute that is not a constant in the trace
    // (tracer/trace_shapes.cpp), such as attention's causal from a loop
    // over [false, true]. The trace is one path, so past the guard x is K.
    for (IRRef g = 0; g < ir_.size(); ++g) {
      if (ir_[g].op != IROp::GUARDT) continue;
      const IRIns& cond = ir_[ir_[g].op1];
      if (cond.op != IROp::EQ) continue;
      const IRRef x = cond.op1, k = cond.op2;
      if (ir_is_const(ir_[k].op) && !ir_is_const(ir_[x].op)) pinned_.emplace(x, std::make_pair(g, k));
    }
  }

  bool run() {
    const IRRef loop = ir_.loop_ref();
    const size_t n = ir_.size();
    bool changed = false;
    for (IRRef q = loop == kNoRef ? 0 : loop + 1; q < n;) {
      const IRRef next = fuse_from(q);
      changed = changed || next != kNoRef;
      q = next == kNoRef ? q + 1 : next;
    }
    if (!changed) return false;
    for (IRRef c : guarded_) {
      const CallTarget& t = ir_.calls()[ir_[c].op2];
      guard_layouts(*t.as<call::Kernel>().region, carg_list(ir_, ir_[c].op1), c, ir_[c].snap);
    }
    std::vector<IRRef> order;
    for (IRRef r = 0; r < n; ++r) {
      for (IRRef b : before_[r]) order.push_back(b);
      if (!ir_is_const(ir_[r].op) && subst_[r] == r && !moved_[r]) order.push_back(r);
    }
    ir_ = rebuild_trace(ir_, subst_, order);
    return true;
  }

 private:
  IRRef reload_of(IRRef c) const {
    const int32_t dest = ir_.calls()[ir_[c].op2].dest_slot;
    if (dest < 0 || c + 1 >= ir_.size()) return kNoRef;
    const IRIns& r = ir_[c + 1];
    return r.op == IROp::SLOAD && r.op2 == 1 && r.op1 == static_cast<uint32_t>(dest) ? c + 1 : kNoRef;
  }

  // The CARG nodes of call c's argument chain.
  std::vector<IRRef> chain_nodes(IRRef c) const {
    std::vector<IRRef> nodes;
    for (IRRef a = ir_[c].op1; a != kNoRef && ir_[a].op == IROp::CARG; a = ir_[a].op1) nodes.push_back(a);
    return nodes;
  }

  struct Step {
    IRRef call;
    IRRef reload;
    Region region;  // the region up to and including this call
    std::vector<IRRef> inputs;  // IR value of each region input
    // Global loads and the recorder's layout guards (with the instructions
    // they test) before this call, from the run's start: they move before it.
    std::vector<IRRef> hoisted;
    std::vector<IRRef> stores;   // register writes (SSTORE) before this call, from the run's start
  };

  // Region input for IR value a (argument i of call t), or nullopt.
  std::optional<int> input(Step& s, IRRef a, const CallTarget& t, size_t i) {
    const IRType ty = ir_[a].type;
    if (ty == IRType::Tensor) {
      if (i >= t.seen.size() || !t.seen[i]) return std::nullopt;
      std::vector<int> dims;
      for (int64_t d : t.seen[i]->shape) {
        if (d == 1) {
          dims.push_back(kDimOne);
          continue;
        }
        // A symbol of its own: Region::add merges it with those the
        // program's broadcasts make it equal to.
        dims.push_back(s.region.new_symbol(d));
      }
      s.inputs.push_back(a);
      return s.region.add_tensor_input(t.seen[i]->dtype, std::move(dims));
    }
    const std::optional<ScalarKind> k = jit::scalar_kind(ty);
    if (!k) return std::nullopt;
    s.inputs.push_back(a);
    return s.region.add_scalar_input(*k);
  }

  // The run from q on: one Step per call that joined it.
  std::vector<Step> scan(IRRef q) {
    std::vector<Step> steps;
    Step cur{kNoRef, kNoRef, Region{}, {}, {}, {}};
    std::map<IRRef, int> value_of;   // IR value -> region value
    // Global index -> its first load in the run: a run stores nothing, so
    // later loads of the global in it are the same tensor, one input; so is
    // a load before the run unless something may store the global between
    // it and the run.
    std::map<uint32_t, IRRef> globals;
    const IRRef start = q;
    for (; q < ir_.size(); ++q) {
      const IRIns& in = ir_[q];
      if (in.op == IROp::CARG || ir_is_const(in.op)) continue;
      if (in.op == IROp::GLOAD) {  // moves before the run
        if (steps.empty()) break;  // nothing to move before yet
        cur.hoisted.push_back(q);
        continue;
      }
      if (in.op == IROp::GUARDT || in.op == IROp::GUARDF) {  // the recorder's, on an input's layout
        if (steps.empty() || !hoist_layout_guard(q, start, cur.hoisted)) break;
        continue;
      }
      if (in.op == IROp::SSTORE) {  // a named local or an argument register: removed if it may be (fuse_from)
        if (steps.empty()) break;
        cur.stores.push_back(q);
        continue;
      }
      if (in.op == IROp::CALL) {
        const CallTarget& t = ir_.calls()[in.op2];
        const std::optional<OpId> op = graph_op(t);
        const IRRef reload = op ? reload_of(q) : kNoRef;
        if (reload == kNoRef) break;
        Step next = cur;
        auto values = value_of;
        auto loads = globals;
        std::vector<int> args;
        const std::vector<IRRef> operands = carg_list(ir_, in.op1);
        // Attributes bind to constants: a pinned value's (its guard before the call).
        std::vector<IRRef> constants = operands;
        for (IRRef& a : constants) {
          auto p = pinned_.find(a);
          if (p != pinned_.end() && p->second.first < q) a = p->second.second;
        }
        const std::optional<BoundCall> bound = bind_call(ir_, t, op_def(*op), constants);
        bool ok = bound.has_value();
        for (size_t k = 0; ok && k < bound->inputs.size(); ++k) {
          const size_t i = bound->inputs[k];
          IRRef a = operands[i];
          if (ir_[a].op == IROp::GLOAD && (a >= start || !global_written(ir_[a].op1, a, start)))
            a = loads.emplace(ir_[a].op1, a).first->second;
          auto it = values.find(a);
          if (it != values.end()) {
            args.push_back(it->second);
            continue;
          }
          std::optional<int> v = input(next, a, t, i);
          if (!v) ok = false;
          else args.push_back(values[a] = *v);
        }
        std::optional<int> r = ok ? next.region.add(*op, args, bound->attrs) : std::nullopt;
        if (!r) break;
        values[reload] = *r;
        next.call = q;
        next.reload = reload;
        steps.push_back(next);
        cur = std::move(next);
        value_of = std::move(values);
        globals = std::move(loads);
        q = reload;  // the loop's ++q passes it
        continue;
      }
      if (ir_is_cse(in.op) && !ir_is_guard(in.op)) continue;  // pure work stays where it is
      break;
    }
    return steps;
  }

  // Whether guard g, in the run from `start`, tests only the layouts of
  // tensors from before the run or loaded in it (the recorder's guards on a
  // tensor entering the trace's graph, tracer/trace_shapes.h); if so, it and
  // the instructions it tests (TDTYPE, TRANK, TDIM and their comparisons)
  // join `hoisted`, in order, to exit through the run's first snapshot.
  bool hoist_layout_guard(IRRef g, IRRef start, std::vector<IRRef>& hoisted) const {
    auto layout = [&](IRRef a) {
      const IROp op = ir_[a].op;
      return op == IROp::TDTYPE || op == IROp::TRANK || op == IROp::TDIM;
    };
    const IRIns& cond = ir_[ir_[g].op1];
    if ((cond.op != IROp::EQ && cond.op != IROp::NE) || !(layout(cond.op1) || layout(cond.op2))) return false;
    // The condition and the layouts it compares (or constants), each of a
    // tensor from before the run or moved before it.
    std::vector<IRRef> chain;
    auto before_run = [&](IRRef a) {
      return a < start || ir_is_const(ir_[a].op) || std::find(hoisted.begin(), hoisted.end(), a) != hoisted.end() ||
             std::find(chain.begin(), chain.end(), a) != chain.end();
    };
    for (IRRef a : {cond.op1, cond.op2}) {
      if (before_run(a)) continue;
      if (!layout(a) || !before_run(ir_[a].op1)) return false;
      chain.push_back(a);
    }
    if (!before_run(ir_[g].op1)) chain.push_back(ir_[g].op1);
    std::sort(chain.begin(), chain.end());
    hoisted.insert(hoisted.end(), chain.begin(), chain.end());
    hoisted.push_back(g);
    return true;
  }

  // Whether an instruction in (from, to) may store global g.
  bool global_written(uint32_t g, IRRef from, IRRef to) const {
    for (IRRef q = from + 1; q < to; ++q) {
      const IROpInfo& info = ir_op_info(ir_[q].op);
      if (info.clobbers_memory) return true;
      if (info.mem_space == IRMemSpace::Global && info.mem_access == IRMemAccess::Store && ir_[q].op1 == g) return true;
    }
    return false;
  }

  // Which step i < last makes value v (its reload), or -1.
  static int internal_result(const std::vector<Step>& steps, IRRef v, size_t last) {
    for (size_t i = 0; i < last; ++i)
      if (steps[i].reload == v) return static_cast<int>(i);
    return -1;
  }

  // Whether the register write st, in the run that ends at steps[last], may
  // go: it writes a result the run no longer makes (an intermediate named by
  // a `let`), its register is one the exits may rebuild (DeferredWrites),
  // and no exit after the run reads it. (The run's own exits go back to its
  // start, where the interpreter writes the register again.) A write of any
  // other value stays, and ends the run: the register owns a reference to
  // the object, which later instructions may read after its other owners
  // let it go, and moving the write would let the interpreter, resuming at
  // the run's start, read a register the run has already written.
  bool removable(const std::vector<Step>& steps, IRRef st, size_t last) const {
    const uint32_t slot = ir_[st].op1;
    return internal_result(steps, ir_[st].op2, last) >= 0 && writes_.can_defer(slot, st) &&
           !writes_.needed_by_exits(slot, st, steps[last].reload);
  }

  // Whether the result of steps[i] is read by anything but the CARG chains
  // of the calls steps[i+1 .. last] and the run's register writes, or by an
  // exit.
  bool escapes(const std::vector<Step>& steps, size_t i, size_t last) const {
    std::set<IRRef> run_chains;  // a one-argument call reads its argument itself
    for (size_t j = i + 1; j <= last; ++j) {
      run_chains.insert(steps[j].call);
      for (IRRef c : chain_nodes(steps[j].call)) run_chains.insert(c);
    }
    for (IRRef st : steps[last].stores)
      if (st < steps[last].call) run_chains.insert(st);  // removable (checked first)
    const IRRef reload = steps[i].reload;
    for (IRRef u = reload + 1; u < ir_.size(); ++u) {
      bool uses = false;
      for_each_operand_ref(ir_[u], [&](IRRef a) { uses = uses || a == reload; });
      if (uses && !run_chains.count(u)) return true;
    }
    for (const Snapshot& s : ir_.snapshots())
      for (const SnapshotEntry& e : s.entries)
        if (e.ref == reload) return true;
    const uint32_t dest = static_cast<uint32_t>(ir_.calls()[ir_[steps[i].call].op2].dest_slot);
    // The run's own exits (its calls, reloads and global loads) go away or
    // move before it.
    return !writes_.can_defer(dest, steps[i].call) || writes_.needed_by_exits(dest, steps[i].call, steps[last].reload);
  }

  // Fuses the run that starts at q, if any; returns where scanning goes on
  // (kNoRef: nothing fused).
  IRRef fuse_from(IRRef q) {
    if (ir_[q].op != IROp::CALL) return kNoRef;
    std::vector<Step> steps = scan(q);
    if (steps.size() < 2) return kNoRef;
    // The run ends at its first result that escapes (it becomes the output);
    // cutting it there may make an earlier result escape (read by a call
    // now past the end), so look again until none does.
    size_t last = steps.size() - 1;
    // A row kernel's output must be of its rows (Region::valid_output).
    auto valid = [&](size_t i) {
      const Region& r = steps[i].region;
      return r.valid_output(r.value_of_op(r.ops.size() - 1));
    };
    for (bool cut = true; cut && last > 0;) {
      cut = false;
      if (!valid(last)) {
        --last;
        cut = true;
        continue;
      }
      // A register write in the run that must stay ends the run before it.
      for (IRRef st : steps[last].stores)
        if (!removable(steps, st, last)) {
          while (last > 0 && steps[last].call > st) --last;
          cut = true;
          break;
        }
      if (cut) continue;
      for (size_t i = 0; i < last; ++i)
        if (escapes(steps, i, last)) {
          last = i;
          cut = true;
          break;
        }
    }
    if (last == 0) return kNoRef;  // one operation: nothing to fuse
    const Step& out = steps[last];
    // The run's register writes of its intermediates go (removable).
    for (IRRef st : out.stores) subst_[st] = kNoRef;
    Region region = out.region;
    region.outputs = {region.value_of_op(region.ops.size() - 1)};
    region.compact_symbols();
    const IRRef first = steps[0].call;
    const uint16_t snap = ir_[first].snap;
    // Global loads and layout guards of the run go before it and exit
    // through its first snapshot.
    for (IRRef g : out.hoisted) {
      if (ir_[g].op == IROp::GLOAD || ir_is_guard(ir_[g].op)) ir_[g].snap = snap;
      moved_[g] = true;
      before_[first].push_back(g);
    }
    // (Guards come when every run is found: DeferredWrites reads the trace
    // in its instructions' order, in which new ones would come last.)
    guarded_.push_back(out.call);
    // The last call computes the region from the region's inputs.
    // (Built in place: moving a CallTarget here trips GCC 12's
    // -Wmaybe-uninitialized on the variant's other alternatives.)
    const int32_t dest = ir_.calls()[ir_[out.call].op2].dest_slot;
    CallTarget& t = ir_.calls().emplace_back();
    t.what = call::Kernel{std::make_shared<const Region>(std::move(region))};
    t.name = "kernel";
    t.dest_slot = dest;
    for (const Step& s : steps)  // every old argument chain of the run
      if (s.call <= out.call)
        for (IRRef c : chain_nodes(s.call)) subst_[c] = kNoRef;
    IRRef chain = kNoRef;
    for (IRRef a : out.inputs) {
      chain = chain == kNoRef ? a : ir_.emit(IROp::CARG, IRType::None, chain, a);
      if (ir_[chain].op == IROp::CARG) {
        subst_.push_back(static_cast<IRRef>(subst_.size()));
        before_[out.call].push_back(chain);
      }
    }
    IRIns& call = ir_[out.call];
    call.op1 = chain;
    call.op2 = static_cast<uint32_t>(ir_.calls().size() - 1);
    call.snap = snap;
    for (size_t i = 0; i < last; ++i) {
      subst_[steps[i].call] = kNoRef;
      subst_[steps[i].reload] = kNoRef;
    }
    while (subst_.size() < ir_.size()) subst_.push_back(static_cast<IRRef>(subst_.size()));  // new constants
    return out.reload + 1;
  }

  // Guards on the layouts of the region's tensor inputs, before the kernel
  // call, leaving through the run's first snapshot: dtype and rank; a dim
  // of size 1 is 1; a symbol's first dim is not 1 (a kernel does not
  // broadcast it), and every other dim of that symbol equals it, so that
  // one guard covers dims the program makes equal. The sizes themselves
  // are free: one kernel serves them all (K2).
  void guard_layouts(const Region& r, std::vector<IRRef> inputs, IRRef call, uint16_t snap) {
    auto emit = [&](IROp op, IRType type, IRRef a, IRRef b = 0, uint16_t sn = kNoSnap) {
      const IRRef x = ir_.emit(op, type, a, b, sn);
      while (subst_.size() < ir_.size()) subst_.push_back(static_cast<IRRef>(subst_.size()));
      before_[call].push_back(x);
      return x;
    };
    auto guard = [&](IROp cmp, IRRef a, IRRef b) {
      emit(IROp::GUARDT, IRType::None, emit(cmp, IRType::Bool, a, b), 0, snap);
    };
    std::vector<IRRef> symbol_dim(static_cast<size_t>(r.num_symbols), kNoRef);
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      const RegionType& t = r.inputs[i];
      if (!t.tensor) continue;
      const IRRef x = inputs[i];
      guard(IROp::EQ, emit(IROp::TDTYPE, IRType::Int, x), ir_.kint(static_cast<int64_t>(t.dtype)));
      guard(IROp::EQ, emit(IROp::TRANK, IRType::Int, x), ir_.kint(static_cast<int64_t>(t.dims.size())));
      for (size_t k = 0; k < t.dims.size(); ++k) {
        const IRRef d = emit(IROp::TDIM, IRType::Int, x, static_cast<uint32_t>(k));
        const int s = t.dims[k];
        if (s == kDimOne) guard(IROp::EQ, d, ir_.kint(1));
        else if (symbol_dim[s] == kNoRef) guard(IROp::NE, d, ir_.kint(1)), symbol_dim[s] = d;
        else guard(IROp::EQ, d, symbol_dim[s]);
      }
    }
  }

  TraceIR& ir_;
  DeferredWrites writes_;
  std::vector<IRRef> subst_;
  std::vector<std::vector<IRRef>> before_;  // instructions placed before each one
  std::vector<bool> moved_;
  std::vector<IRRef> guarded_;  // the kernel calls, whose inputs' layouts get guards
  std::map<IRRef, std::pair<IRRef, IRRef>> pinned_;  // value -> (its first guard x == K, K)
};

}  // namespace

bool FusionPass::run(TraceIR& ir) { return Fuser(ir).run(); }

}  // namespace tessera::jit
