// TraceRecorder, indexing: list and tensor element loads and stores.
//
// Design. An element access the trace can do itself is inlined behind
// guards: a list element in range (LLEN, an unsigned bounds compare, then
// LLOAD typed by the element seen, or LREF/LSTORE), a tensor element of a
// dtype traces load and store raw (TDTYPE and TRANK guards, a TDIM bounds
// guard per index, the row-major flat index TIDX, then TLOAD or
// TREF/TSTORE). Other loads go through the index_get helper; other stores
// abort the recording.
#include <algorithm>
#include <vector>

#include "tracer/recorder.h"
#include "tracer/recorder_internal.h"
#include "vm/tensor/tensor.h"

namespace tessera::jit {

namespace {

// Tensor dtypes whose elements traces load and store directly (f16 and
// bf16 go through the runtime's conversion helpers).
bool raw_dtype(DType d) { return d == DType::F32 || d == DType::I32 || d == DType::I64 || d == DType::Bool; }

// What an element of dtype `d` reads as: float, int or bool.
IRType element_type(DType d) {
  if (d == DType::Bool) return IRType::Bool;
  return d == DType::F32 ? IRType::Float : IRType::Int;
}

// Stores a trace does inline: a number into an f32 tensor, an int into an
// int tensor, a bool into a bool tensor (the rest converts or raises: helper).
bool storable(DType d, const Value& v) {
  switch (d) {
    case DType::F32: return v.is_float() || v.is_int();
    case DType::I32:
    case DType::I64: return v.is_int();
    case DType::Bool: return v.is_bool();
    default: return false;
  }
}

// Whether a list holds an int beside its element `at` (a float): a row of
// mixed numbers, such as a matrix whose entries alternate, whose next
// element may well be an int. Only a few neighbours are looked at: what a
// loop over the row reads next, at a constant cost per recorded load.
bool mixed_row_near(const std::vector<Value>& items, size_t at) {
  const size_t lo = at >= 4 ? at - 4 : 0, hi = std::min(items.size(), at + 5);
  for (size_t k = lo; k < hi; ++k)
    if (items[k].is_int()) return true;
  return false;
}

}  // namespace

TraceRecorder::Status TraceRecorder::record_index(uint32_t pc, const Instr& ins, const Value* R) {
  switch (ins.op) {
    case Op::GETINDEX: {
      const Value& obj = R[ins.b];
      const Value& idx = R[ins.c];
      if (obj.is_tensor()) {
        const uint32_t reg = ins.c;
        if (IRRef ti = tensor_element(ins.b, &reg, 1, R); ti != kNoRef) {
          write(ins.a, ir_.emit(IROp::TLOAD, element_type(obj.as_tensor()->dtype), read(ins.b, R), ti));
          return Status::Continue;
        }
      }
      IRRef o = read(ins.b, R), i = read(ins.c, R);
      if (str_index(ins.a, o, i, obj, idx)) return Status::Continue;
      if (obj.is_list() && idx.is_int() && idx.as_int() >= 0 &&
          static_cast<uint64_t>(idx.as_int()) < obj.as_list()->items.size()) {
        IRRef len = ir_.emit(IROp::LLEN, IRType::Int, o);
        guard(true, ir_.emit(IROp::ULT, IRType::Bool, i, len));
        const auto& items = obj.as_list()->items;
        const size_t at = static_cast<size_t>(idx.as_int());
        const IRRef load = ir_.emit(IROp::LLOAD, type_of_value(items[at]), o, i, snapshot(pc));
        if (items[at].is_float() && mixed_row_near(items, at)) ir_[load].flags = kMixedRow;
        write(ins.a, load);
        return Status::Continue;
      }
      call_helper(CallTarget{call::IndexGet{1}, "index_get"}, {o, i}, ins.a);
      return Status::Continue;
    }
    case Op::SETINDEX: {
      const Value& obj = R[ins.a];
      const Value& idx = R[ins.b];
      if (obj.is_tensor() && storable(obj.as_tensor()->dtype, R[ins.c])) {
        const uint32_t reg = ins.b;
        if (IRRef ti = tensor_element(ins.a, &reg, 1, R); ti != kNoRef) {
          IRRef ref = ir_.emit(IROp::TREF, IRType::None, read(ins.a, R), ti);
          ir_.emit(IROp::TSTORE, IRType::None, ref, read(ins.c, R));
          return Status::Continue;
        }
      }
      IRRef o = read(ins.a, R), i = read(ins.b, R), v = read(ins.c, R);
      if (obj.is_list() && idx.is_int() && idx.as_int() >= 0 &&
          static_cast<uint64_t>(idx.as_int()) < obj.as_list()->items.size()) {
        IRRef len = ir_.emit(IROp::LLEN, IRType::Int, o);
        guard(true, ir_.emit(IROp::ULT, IRType::Bool, i, len));
        IRRef ref = ir_.emit(IROp::LREF, IRType::None, o, i);
        ir_.emit(IROp::LSTORE, IRType::None, ref, v);
        return Status::Continue;
      }
      // Anything else (a negative or out-of-range index, a value the tensor
      // converts, an object that raises): the generic store.
      call_effect(CallTarget{call::IndexSet{1}, "index_set"}, {o, i, v});
      return Status::Continue;
    }
    case Op::GETINDEXN: {
      if (R[ins.b].is_tensor()) {
        std::vector<uint32_t> regs;
        for (int k = 0; k < ins.c; ++k) regs.push_back(ins.b + 1 + k);
        if (IRRef ti = tensor_element(ins.b, regs.data(), regs.size(), R); ti != kNoRef) {
          write(ins.a, ir_.emit(IROp::TLOAD, element_type(R[ins.b].as_tensor()->dtype), read(ins.b, R), ti));
          return Status::Continue;
        }
      }
      std::vector<IRRef> args{read(ins.b, R)};
      for (int k = 0; k < ins.c; ++k) args.push_back(read(ins.b + 1 + k, R));
      call_helper(CallTarget{call::IndexGet{static_cast<uint8_t>(ins.c)}, "index_get"},
                  args, ins.a);
      return Status::Continue;
    }

    case Op::SETINDEXN: {
      // obj[i, j, ...] = v: A object, A+1.. the indices, B the value.
      const Value& obj = R[ins.a];
      if (obj.is_tensor() && storable(obj.as_tensor()->dtype, R[ins.b])) {
        std::vector<uint32_t> regs;
        for (int k = 0; k < ins.c; ++k) regs.push_back(ins.a + 1 + k);
        if (IRRef ti = tensor_element(ins.a, regs.data(), regs.size(), R); ti != kNoRef) {
          IRRef ref = ir_.emit(IROp::TREF, IRType::None, read(ins.a, R), ti);
          ir_.emit(IROp::TSTORE, IRType::None, ref, read(ins.b, R));
          return Status::Continue;
        }
      }
      std::vector<IRRef> args{read(ins.a, R)};
      for (int k = 0; k < ins.c; ++k) args.push_back(read(ins.a + 1 + k, R));
      args.push_back(read(ins.b, R));
      call_effect(CallTarget{call::IndexSet{static_cast<uint8_t>(ins.c)}, "index_set"}, args);
      return Status::Continue;
    }
    default: break;
  }
  return abort(AbortReason::NYIBytecode, op_info(ins.op).name);
}

IRRef TraceRecorder::tensor_element(uint32_t obj, const uint32_t* idx, size_t n, const Value* R) {
  const TensorObj& t = *R[obj].as_tensor();
  if (!raw_dtype(t.dtype) || n != t.rank()) return kNoRef;
  for (size_t k = 0; k < n; ++k) {
    const Value& i = R[idx[k]];
    if (!i.is_int() || i.as_int() < 0 || i.as_int() >= t.shape[k]) return kNoRef;
  }
  IRRef tr = read(obj, R);
  IRRef dt = ir_.emit(IROp::TDTYPE, IRType::Int, tr);
  guard(true, ir_.emit(IROp::EQ, IRType::Bool, dt, ir_.kint(static_cast<int64_t>(t.dtype))));
  // The rank before the dimensions: a TDIM past the rank is not the tensor's.
  IRRef rank = ir_.emit(IROp::TRANK, IRType::Int, tr);
  guard(true, ir_.emit(IROp::EQ, IRType::Bool, rank, ir_.kint(static_cast<int64_t>(n))));
  // Row-major flat index, each index checked against its dimension (one
  // unsigned compare also rejects negative indices).
  IRRef flat = kNoRef;
  for (size_t k = 0; k < n; ++k) {
    IRRef i = read(idx[k], R);
    IRRef dim = ir_.emit(IROp::TDIM, IRType::Int, tr, static_cast<uint32_t>(k));
    guard(true, ir_.emit(IROp::ULT, IRType::Bool, i, dim));
    flat = flat == kNoRef ? i : ir_.emit(IROp::ADD, IRType::Int, ir_.emit(IROp::MUL, IRType::Int, flat, dim), i);
  }
  if (flat == kNoRef) return kNoRef;  // rank 0: no element access by index
  return ir_.emit(IROp::TIDX, IRType::Int, flat, static_cast<uint32_t>(t.dtype));
}

}  // namespace tessera::jit
