// Exit plans (exit_plan.h): built from the snapshots, run by the C++ side.
#include "deopt/exit_plan.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "tracer/ir_value_tags.h"
#include "vm/tensor/tensor.h"

namespace tessera::jit {
namespace {

bool is_object_type(IRType t) { return t != IRType::None && tag_for(t) >= Tag::Str; }

// Builds one snapshot's plan.
class ExitPlanner {
 public:
  ExitPlanner(const TraceIR& ir, const std::vector<bool>& scalar) : ir_(ir), scalar_(scalar) {}

  ExitPlan plan(uint16_t snap_no) { return plan(snap_no, ir_.snapshots()[snap_no]); }

  ExitPlan plan(uint16_t snap_no, const Snapshot& snap) {
    plan_ = ExitPlan{};
    value_index_.clear();
    object_index_.clear();
    plan_.snap = snap_no;
    // One allocation per list (plans are built for every exit of every trace).
    plan_.resume_pcs.reserve(snap.frames.size() + 1);
    plan_.frames.reserve(snap.frames.size());
    plan_.writes.reserve(snap.entries.size());
    plan_.values.reserve(snap.entries.size());
    plan_.release_checked.reserve(snap.entries.size());
    // A caller resumes after the CALL that entered its callee; the innermost
    // frame resumes at the snapshot's pc.
    for (const SnapshotFrame& f : snap.frames) {
      plan_.resume_pcs.push_back(f.call_pc + 1);
      plan_.frames.push_back(ExitFrame{f.proto, f.base});
    }
    plan_.resume_pcs.push_back(snap.pc);
    // Plain values first, in entry order (without sunk objects, the
    // values are exactly the entries': exit_vals keeps its meaning).
    for (const SnapshotEntry& e : snap.entries) {
      if (e.ref >= ir_.size()) throw_at_instruction(ir_, e.ref, "snapshot #" + std::to_string(snap_no) + " names no instruction");
      if (ir_is_sunk_allocation(ir_[e.ref].op)) continue;
      if (ir_[e.ref].type == IRType::None)
        throw_at_instruction(ir_, e.ref, "snapshot #" + std::to_string(snap_no) + " names a value of type none");
      plan_.writes.push_back(ExitWrite{e.slot, add_value(e.ref, /*shared=*/false)});
      if (e.slot >= scalar_.size() || !scalar_[e.slot]) plan_.release_checked.push_back(e.slot);
    }
    for (const SnapshotEntry& e : snap.entries)
      if (ir_is_sunk_allocation(ir_[e.ref].op)) plan_.objects[object(e.ref)].slots.push_back(e.slot);
    return std::move(plan_);
  }

 private:
  // Entries each get their own value (their order is the exit_vals
  // layout); elements share one per IR value.
  uint32_t add_value(IRRef r, bool shared) {
    if (shared) {
      auto it = value_index_.find(r);
      if (it != value_index_.end()) return it->second;
    }
    const auto i = static_cast<uint32_t>(plan_.values.size());
    plan_.values.push_back(ExitValue{r, ir_[r].type});
    if (shared) value_index_.emplace(r, i);
    return i;
  }

  // The index of sunk allocation `r` in plan_.objects, planning it (after
  // the objects among its elements) the first time.
  uint32_t object(IRRef r) {
    if (auto it = object_index_.find(r); it != object_index_.end()) {
      if (it->second == kPlanning) throw_at_instruction(ir_, r, "a sunk allocation contains itself");
      return it->second;
    }
    object_index_.emplace(r, kPlanning);
    const IRIns& ins = ir_[r];
    ExitObject o;
    o.ref = r;
    o.op = ins.op;
    if (ins.op == IROp::VNEWTENSOR) o.tensor_layout = tensor_layout(r);
    for (IRRef el : carg_list(ir_, ins.op1)) {
      if (el >= ir_.size()) throw_at_instruction(ir_, r, "an element names no instruction");
      if (ir_is_sunk_allocation(ir_[el].op)) {
        if (ins.op == IROp::VNEWTENSOR) throw_at_instruction(ir_, r, "a tensor element is an object");
        o.elements.push_back(ExitOperand{true, object(el)});
      } else {
        if (ir_[el].type == IRType::None) throw_at_instruction(ir_, r, "an element has type none");
        o.elements.push_back(ExitOperand{false, add_value(el, /*shared=*/true)});
      }
    }
    const auto i = static_cast<uint32_t>(plan_.objects.size());
    plan_.objects.push_back(std::move(o));
    object_index_[r] = i;
    return i;
  }

  // {dtype, rank, dims...} of VNEWTENSOR `ref`, checked against its
  // elements (the helper builds the tensor from them).
  std::vector<int64_t> tensor_layout(IRRef ref) {
    const IRIns& ins = ir_[ref];
    if (ins.op2 >= ir_.virtual_tensors().size())
      throw_at_instruction(ir_, ref, "virtual tensor #" + std::to_string(ins.op2) + " does not exist");
    const VirtualTensor& vt = ir_.virtual_tensors()[ins.op2];
    if (vt.shape.size() > kMaxRank || std::any_of(vt.shape.begin(), vt.shape.end(), [](int64_t d) { return d < 0; }))
      throw_at_instruction(ir_, ref, "virtual tensor #" + std::to_string(ins.op2) + " has a bad shape");
    const std::vector<IRRef> elements = carg_list(ir_, ins.op1);
    if (static_cast<int64_t>(elements.size()) != vt.numel())
      throw_at_instruction(ir_, ref, "the element count does not match virtual tensor #" + std::to_string(ins.op2));
    const bool floats = dtype_is_float(vt.dtype);
    for (IRRef v : elements) {
      const IRType t = v < ir_.size() ? ir_[v].type : IRType::None;
      if (floats ? t != IRType::Float : t != IRType::Int && t != IRType::Bool)
        throw_at_instruction(ir_, ref, std::string("an element's type does not fit dtype ") + dtype_name(vt.dtype));
    }
    std::vector<int64_t> layout{static_cast<int64_t>(vt.dtype), static_cast<int64_t>(vt.shape.size())};
    layout.insert(layout.end(), vt.shape.begin(), vt.shape.end());
    return layout;
  }

  static constexpr uint32_t kPlanning = 0xFFFFFFFFu;
  const TraceIR& ir_;
  const std::vector<bool>& scalar_;
  ExitPlan plan_;
  std::unordered_map<IRRef, uint32_t> value_index_, object_index_;
};

Value build_object(const ExitObject& o, const ExitPlan& plan, const uint64_t* raw, const std::vector<Value>& vals,
                   const std::vector<Value>& built) {
  if (o.op == IROp::VNEWLIST) {
    std::vector<Value> items;
    items.reserve(o.elements.size());
    for (const ExitOperand& e : o.elements) items.push_back(e.object ? built[e.index] : vals[e.index]);
    return make_list(std::move(items));
  }
  const auto dtype = static_cast<DType>(o.tensor_layout[0]);
  const auto rank = static_cast<size_t>(o.tensor_layout[1]);
  Value v = make_tensor(dtype, Shape(o.tensor_layout.begin() + 2, o.tensor_layout.begin() + 2 + static_cast<std::ptrdiff_t>(rank)),
                        /*zero=*/false);
  TensorObj& t = tensor_of(v);
  // Elements are computed as the CPU kernels do (a double for float dtypes,
  // an int64 otherwise) and rounded by the store, as TensorObj stores them.
  for (int64_t i = 0; i < t.numel; ++i) {
    const ExitOperand& e = o.elements[static_cast<size_t>(i)];
    const uint64_t bits = raw[e.index];
    if (dtype_is_float(dtype)) {
      double d;
      std::memcpy(&d, &bits, sizeof d);
      t.set_f(i, d);
    } else if (plan.values[e.index].type == IRType::Bool) {
      t.set_i(i, (bits & 1) != 0);
    } else {
      t.set_i(i, static_cast<int64_t>(bits));
    }
  }
  return v;
}

// ExitPlan::passed of a snapshot's plan.
void choose_passed(const TraceIR& ir, const Snapshot& snap, ExitPlan& plan) {
  if (plan.builds_objects() || !snap.frames.empty() || snap.base_proto != nullptr) return;
  uint32_t ints = 0, floats = 0;
  for (uint32_t w = 0; w < plan.writes.size(); ++w) {
    const IRRef v = plan.values[plan.writes[w].value].ref;
    if (ir_is_const(ir[v].op)) continue;
    if (ir[v].type == IRType::Int && ints < kPassedInts)
      plan.passed.push_back(PassedValue{w, static_cast<uint8_t>(ints++)});
    else if (ir[v].type == IRType::Float && floats < kPassedFloats)
      plan.passed.push_back(PassedValue{w, static_cast<uint8_t>(kPassedInts + floats++)});
  }
}

}  // namespace

std::vector<bool> scalar_slots(const TraceIR& ir) {
  std::vector<bool> slots;
  for (IRRef r = 0; r < ir.size(); ++r) {
    const IRIns& in = ir[r];
    if (ir_op_info(in.op).moves_base) return {};  // the same slot number names other registers
    if (in.op == IROp::SLOAD && in.op2 != kSloadReload && in.type != IRType::None && !is_object_type(in.type)) {
      if (in.op1 >= slots.size()) slots.resize(in.op1 + 1);
      slots[in.op1] = true;
    }
  }
  auto erase = [&](uint32_t slot) {
    if (slot < slots.size()) slots[slot] = false;
  };
  for (IRRef r = 0; r < ir.size(); ++r) {
    const IRIns& in = ir[r];
    if ((in.op == IROp::SSTORE && in.op2 < ir.size() && is_object_type(ir[in.op2].type)) ||
        (in.op == IROp::SLOAD && in.op2 != 0 && is_object_type(in.type)))
      erase(in.op1);
    if (in.op == IROp::CALL && in.op2 < ir.calls().size() && ir.calls()[in.op2].dest_slot >= 0)
      erase(static_cast<uint32_t>(ir.calls()[in.op2].dest_slot));
  }
  return slots;
}

std::vector<ExitPlan> plan_exits(const TraceIR& ir) {
  const std::vector<bool> scalar = scalar_slots(ir);
  ExitPlanner planner(ir, scalar);
  std::vector<ExitPlan> plans;
  plans.reserve(ir.snapshots().size());
  for (size_t k = 0; k < ir.snapshots().size(); ++k) {
    plans.push_back(planner.plan(static_cast<uint16_t>(k)));
    choose_passed(ir, ir.snapshots()[k], plans.back());
  }
  return plans;
}

ExitPlan plan_tier_up_exit(const TraceIR& ir, const std::vector<SnapshotEntry>& entries) {
  const std::vector<bool> scalar = scalar_slots(ir);
  Snapshot resume = ir.snapshots().empty() ? Snapshot{} : ir.snapshots()[0];
  resume.entries = entries;
  for (const SnapshotEntry& e : entries)
    if (e.ref < ir.size() && ir_is_sunk_allocation(ir[e.ref].op))
      throw_at_instruction(ir, e.ref, "the tier-up exit cannot build a sunk object");
  return ExitPlanner(ir, scalar).plan(0, resume);
}

void execute_exit_plan(const ExitPlan& plan, const uint64_t* raw, Value* base) {
  // Every value and object is owned here before any register lets go of
  // what it held: an element may be owned only by a register this exit
  // overwrites.
  std::vector<Value> vals;
  vals.reserve(plan.values.size());
  for (size_t i = 0; i < plan.values.size(); ++i) vals.push_back(value_from_payload(plan.values[i].type, raw[i]));
  std::vector<Value> built;
  built.reserve(plan.objects.size());
  for (const ExitObject& o : plan.objects) built.push_back(build_object(o, plan, raw, vals, built));
  for (const ExitWrite& w : plan.writes) base[w.slot] = vals[w.value];
  for (size_t k = 0; k < plan.objects.size(); ++k)
    for (uint32_t slot : plan.objects[k].slots) base[slot] = built[k];
}

Value value_from_payload(IRType t, uint64_t payload) {
  switch (t) {
    case IRType::Int: return Value::integer(static_cast<int64_t>(payload));
    case IRType::Float: {
      double d;
      std::memcpy(&d, &payload, sizeof d);
      return Value::number(d);
    }
    case IRType::Bool: return Value::boolean((payload & 1) != 0);
    case IRType::DType: return Value::dtype(static_cast<DType>(payload));
    case IRType::Func: return Value::function(reinterpret_cast<FunctionProto*>(payload));
    case IRType::Builtin: return Value::builtin(reinterpret_cast<const BuiltinDef*>(payload));
    case IRType::Str:
    case IRType::List:
    case IRType::Tensor: return Value::borrow(reinterpret_cast<Obj*>(payload));
    case IRType::Nil:
    case IRType::None: break;
  }
  return Value();
}

}  // namespace tessera::jit
