// Kernel IR → LLVM IR for the host CPU: the walk over the kernel (design
// note in cpu_emitter.h, the emitter's parts in cpu_emitter_internal.h).
#include "codegen/kernel/cpu/cpu_emitter_internal.h"

#include <cmath>
#include <limits>
#include <unordered_set>

#include "codegen/kernel/kernel_verify.h"

namespace tessera::kir::detail {

void CpuEmitter::run(const std::string& fn_name) {
  auto* i64 = b_.getInt64Ty();
  auto* ptr = b_.getPtrTy();
  auto* fty = llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64}, false);
  fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fn_name, m_);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value* args = fn_->getArg(0);
  entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  b_.SetInsertPoint(entry_);
  // Params and dims are read once.
  auto* params = b_.CreateLoad(ptr, args, "params");
  for (size_t i = 0; i < k_.params.size(); ++i)
    param_ptrs_.push_back(b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, params, i), "p." + k_.params[i].name));
  auto* dims = b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, args, 1), "dims");
  for (size_t i = 0; i < k_.dims.size(); ++i) {
    if (i < k_.dim_values.size() && k_.dim_values[i]) dim_vals_.push_back(b_.getInt64(*k_.dim_values[i]));
    else dim_vals_.push_back(b_.CreateLoad(i64, b_.CreateConstGEP1_64(i64, dims, i), "d." + k_.dims[i]));
  }
  llvm::Value* g[3];
  for (int a = 0; a < 3; ++a) g[a] = b_.CreateLoad(i64, b_.CreateConstGEP1_64(i64, args, 2 + a), "g");
  // for p in begin .. end-1: split p into grid coordinates, run the body.
  loop(fn_->getArg(1), fn_->getArg(2), [&](llvm::Value* p) {
    pid_[0] = b_.CreateURem(p, g[0]);
    llvm::Value* rest = b_.CreateUDiv(p, g[0]);
    pid_[1] = b_.CreateURem(rest, g[1]);
    pid_[2] = b_.CreateUDiv(rest, g[1]);
    block(k_.body);
  });
  b_.CreateRetVoid();
}
// ------------------------------------------------------------ instructions
// A block's instructions in order, except that runs of strip operations on
// tiles of one size become one loop over the strips (strip_group).
void CpuEmitter::block(const Block& blk) {
  size_t i = 0;
  while (i < blk.insts.size()) {
    if (strip_numel(blk.insts[i]) > 0) {
      i = strip_group(blk, i);
      continue;
    }
    inst(blk.insts[i++]);
  }
}
// The strip operations of one size from blk.insts[start] on, with the
// scalar work between them, as one loop: each strip's values stay in
// registers, and only values used after the run are stored to their
// buffers. Returns the index after the run.
size_t CpuEmitter::strip_group(const Block& blk, size_t start) {
  const int64_t n = strip_numel(blk.insts[start]);
  std::vector<const Inst*> members, reductions;
  // Values known only after the loop: the run's reductions and the scalars
  // made of them; an operation that reads one ends the run.
  std::unordered_set<ValueId> after;
  size_t end = start, j = start;
  for (; j < blk.insts.size(); ++j) {
    const Inst& in = blk.insts[j];
    bool late = false;
    for (ValueId o : in.operands) late = late || after.count(o);
    if (late) break;
    if (strip_numel(in) == n) {
      members.push_back(&in);
      if (in.op == KOp::Reduce) {
        reductions.push_back(&in);
        after.insert(in.results[0]);
      }
      end = j + 1;
    } else if (!hoistable_scalar(in)) {
      break;
    }
  }
  for (size_t i = start; i < end; ++i)  // the scalars first: no member is a scalar's operand
    if (strip_numel(blk.insts[i]) == 0) inst(blk.insts[i]);
  std::unordered_map<ValueId, int> inside;
  for (const Inst* m : members)
    for (ValueId o : m->operands) ++inside[o];
  std::vector<ValueId> escaping;
  for (const Inst* m : members)
    for (ValueId r : m->results)
      if (m->op != KOp::Reduce && uses(r) > inside[r]) {
        vals_[r].buf = new_buffer(type(r));
        escaping.push_back(r);
      }
  for (const Inst* r : reductions) begin_strip_reduce(*r);
  auto body = [&](llvm::Value* s) {
    for (const Inst* m : members) {
      llvm::Value* v = strip_op(*m, s, n);
      if (!m->results.empty() && m->op != KOp::Reduce) cur_[m->results[0]] = v;
    }
    for (ValueId r : escaping) put_strip(r, s, cur_.at(r));
    cur_.clear();
  };
  // When the run's only effects are stores under one prefix mask (the
  // first N - B lanes), and its reductions fold values that this mask
  // selects (lanes past it give the fold's identity), the strips past it
  // compute nothing that is kept: stop there (a tile of 1024 over a
  // 16-element tensor runs 2 strips of 8; a row kernel's chunk of 1024 over
  // a row of 64, 4 strips of 16). The whole strips before it have every lane
  // of that mask set, so their loads and stores under it are plain vector
  // accesses (masked ones cost several times as much, stores on AMD cores
  // most of all); one masked strip ends the run.
  std::optional<ValueId> prefix_mask;
  llvm::Value* live = escaping.empty() ? prefix_lanes(members, n, prefix_mask) : nullptr;
  if (!reductions.empty() && !live) {
    strips(n, body);
  } else if (live) {
    llvm::Value* whole = b_.CreateAnd(live, b_.getInt64(~static_cast<int64_t>(W_ - 1)));
    full_mask_ = prefix_mask;
    loop(b_.getInt64(0), whole, body, b_.getInt64(W_));
    full_mask_.reset();
    auto* tail = llvm::BasicBlock::Create(ctx_, "strip.tail", fn_);
    auto* after = llvm::BasicBlock::Create(ctx_, "strip.done", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(whole, live), tail, after);
    b_.SetInsertPoint(tail);
    body(whole);
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
  } else {
    strips(n, body);
  }
  for (const Inst* r : reductions) end_strip_reduce(*r, n);
  return end;
}
// The number of leading lanes (at most n) that the stores among `members`
// keep, when they are all masked by one mask `splat(B) + range < splat(N)`
// (or `range < splat(N)`); null when not.
llvm::Value* CpuEmitter::prefix_lanes(const std::vector<const Inst*>& members, int64_t n, std::optional<ValueId>& mask) {
  for (const Inst* m : members) {
    if (m->op != KOp::Store) continue;
    if (m->operands.size() < 3 || (mask && *mask != m->operands[2])) return nullptr;
    mask = m->operands[2];
  }
  // A reduction's operand: select(mask, x, identity), the fold's identity a
  // constant the lanes past the mask add nothing with (sum: +0; extremes: a
  // value that never wins: -inf for max and argmax, +inf for min).
  for (const Inst* m : members) {
    if (m->op != KOp::Reduce) continue;
    const Inst* sel = def_of(m->operands[0]);
    if (!sel || sel->op != KOp::Select || (mask && *mask != sel->operands[0])) return nullptr;
    mask = sel->operands[0];
    const Inst* sp = def_of(sel->operands[2]);
    const Inst* k = sp && sp->op == KOp::Splat ? def_of(sp->operands[0]) : nullptr;
    if (!k || k->op != KOp::Const) return nullptr;
    const double inf = std::numeric_limits<double>::infinity();
    const double identity = m->reduce == ReduceKind::Sum ? 0.0 : m->reduce == ReduceKind::Min ? inf : -inf;
    if (k->fvalue != identity || std::signbit(k->fvalue) != std::signbit(identity)) return nullptr;
  }
  if (!mask) return nullptr;
  const Inst* c = def_of(*mask);
  if (!c || c->op != KOp::Cmp || c->pred != Pred::Lt) return nullptr;
  const Inst* lim = def_of(c->operands[1]);
  if (!lim || lim->op != KOp::Splat) return nullptr;
  const Inst* idx = def_of(c->operands[0]);
  llvm::Value* first = nullptr;  // B
  if (idx && idx->op == KOp::Range) first = b_.getInt64(0);
  else if (auto base = contiguous_base(c->operands[0])) first = scalar(*base);
  if (!first) return nullptr;
  llvm::Value* left = b_.CreateSub(scalar(lim->operands[0]), first);
  left = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, left, b_.getInt64(0));
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, left, b_.getInt64(n));
}
// One strip (at `start`, of a tile of n elements) of a strip operation.
llvm::Value* CpuEmitter::strip_op(const Inst& in, llvm::Value* s, int64_t n) {
  switch (op_info(in.op).shape) {
    case KShape::Range: {
      std::vector<llvm::Constant*> iota;
      for (int i = 0; i < W_; ++i) iota.push_back(b_.getInt64(i));
      return b_.CreateAdd(b_.CreateVectorSplat(static_cast<unsigned>(W_), s), llvm::ConstantVector::get(iota));
    }
    case KShape::Splat: return strip(in.operands[0], s);
    case KShape::Load: return load_strip(in, s, n);
    case KShape::Reduce: strip_reduce_step(in, s, n); return nullptr;
    case KShape::Store: store_strip(in, s, n); return nullptr;
    default: {
      std::vector<llvm::Value*> x;
      for (ValueId o : in.operands) x.push_back(strip(o, s));
      return compute(in, x);
    }
  }
}
void CpuEmitter::inst(const Inst& in) {
  const KShape shape = op_info(in.op).shape;
  if (in.op == KOp::Yield) return;  // For handles it
  if (in.op == KOp::For) return for_loop(in);
  if (in.op == KOp::Store) return store_scalar(in);
  if (in.op == KOp::Reduce) return reduce(in);  // to a scalar or to a tile
  const ValueId r = in.results.at(0);
  const Type& t = type(r);
  if (!t.is_tile()) {
    vals_[r].scalar = scalar_inst(in, shape);
    return;
  }
  vals_[r].buf = new_buffer(t);
  switch (shape) {
    case KShape::Broadcast: return broadcast(in);
    case KShape::Trans: return trans(in);
    case KShape::Dot: return dot(in);
    case KShape::BlockLoad: return block_load(in);
    default: fail(std::string("no tile form of ") + op_info(in.op).name);
  }
}
llvm::Value* CpuEmitter::scalar_inst(const Inst& in, KShape shape) {
  const Type& t = type(in.results[0]);
  switch (shape) {
    case KShape::Const:
      if (elem_is_float(t.elem)) {
        if (t.elem != Elem::F32 && t.elem != Elem::F64) fail("constants of " + std::string(elem_name(t.elem)) + ": use f32 and cast");
        return llvm::ConstantFP::get(reg_type(t.elem), in.fvalue);
      }
      return llvm::ConstantInt::get(reg_type(t.elem), static_cast<uint64_t>(in.ivalue), true);
    case KShape::Dim: return dim_vals_.at(in.index);
    case KShape::ProgramId: return pid_[in.index];
    case KShape::Load: {
      // A masked-off scalar load must not touch memory: branch around it.
      const Param& p = k_.params[in.index];
      auto addr = [&] { return elem_ptr(param_ptrs_[in.index], p.elem, scalar(in.operands[0])); };
      if (in.operands.size() < 2) return b_.CreateLoad(reg_type(p.elem), addr());
      llvm::Value* other = in.operands.size() > 2 ? scalar(in.operands[2]) : llvm::Constant::getNullValue(reg_type(p.elem));
      llvm::BasicBlock* from = b_.GetInsertBlock();
      auto* yes = llvm::BasicBlock::Create(ctx_, "ld", fn_);
      auto* join = llvm::BasicBlock::Create(ctx_, "ld.join", fn_);
      b_.CreateCondBr(scalar(in.operands[1]), yes, join);
      b_.SetInsertPoint(yes);
      llvm::Value* v = b_.CreateLoad(reg_type(p.elem), addr());
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      auto* phi = b_.CreatePHI(reg_type(p.elem), 2);
      phi->addIncoming(v, yes);
      phi->addIncoming(other, from);
      return phi;
    }
    default: {
      if (!elementwise(shape)) fail(std::string("no scalar form of ") + op_info(in.op).name);
      std::vector<llvm::Value*> x;
      for (ValueId o : in.operands) x.push_back(scalar(o));
      return compute(in, x);
    }
  }
}
// offsets = splat(s) + range (either order), 1-D: the scalar s; else null.
std::optional<ValueId> CpuEmitter::contiguous_base(ValueId off) {
  const Inst* d = def_of(off);
  if (!d || d->op != KOp::Add || type(off).shape.size() != 1) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const Inst* s = def_of(d->operands[i]);
    const Inst* r = def_of(d->operands[1 - i]);
    if (s && r && s->op == KOp::Splat && r->op == KOp::Range) return s->operands[0];
  }
  return std::nullopt;
}


llvm::Type* CpuEmitter::reg_type(Elem e) {
  switch (e) {
    case Elem::I1: return b_.getInt1Ty();
    case Elem::I32: return b_.getInt32Ty();
    case Elem::I64: return b_.getInt64Ty();
    case Elem::F16: return b_.getHalfTy();
    case Elem::BF16: return b_.getInt16Ty();  // raw bits; converted by cast
    case Elem::F32: return b_.getFloatTy();
    case Elem::F64: return b_.getDoubleTy();
  }
  return nullptr;
}

void CpuEmitter::loop(llvm::Value* lo, llvm::Value* hi, const std::function<void(llvm::Value*)>& body, llvm::Value* step) {
  if (!step) step = b_.getInt64(1);
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* head = llvm::BasicBlock::Create(ctx_, "loop", fn_);
  auto* bodyb = llvm::BasicBlock::Create(ctx_, "body", fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, "done", fn_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  auto* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  i->addIncoming(lo, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(i, hi), bodyb, exit);
  b_.SetInsertPoint(bodyb);
  body(i);
  i->addIncoming(b_.CreateAdd(i, step), b_.GetInsertBlock());
  b_.CreateBr(head);
  b_.SetInsertPoint(exit);
}

int64_t CpuEmitter::padded(int64_t n) const {
  const int64_t q = std::max<int64_t>(W_, kSumLanes);
  return (n + q - 1) / q * q;
}

llvm::Value* CpuEmitter::new_buffer(const Type& t) {
  tile_bytes_ += padded(t.numel()) * static_cast<int64_t>(m_.getDataLayout().getTypeAllocSize(mem_type(t.elem)));
  if (tile_bytes_ > kMaxTileBytes) fail("its tiles need more than 1 MiB of stack");
  llvm::IRBuilder<> eb(entry_, entry_->begin());
  auto* a = eb.CreateAlloca(llvm::ArrayType::get(mem_type(t.elem), static_cast<uint64_t>(padded(t.numel()))));
  a->setAlignment(llvm::Align(64));
  return a;
}

llvm::Value* CpuEmitter::scalar(ValueId v) {
  auto it = vals_.find(v);
  if (it == vals_.end() || !it->second.scalar) fail("value %" + k_.value(v).name + " is not a computed scalar");
  return it->second.scalar;
}

llvm::Value* CpuEmitter::buf(ValueId v) {
  auto it = vals_.find(v);
  if (it == vals_.end() || !it->second.buf) fail("value %" + k_.value(v).name + " is not a computed tile");
  return it->second.buf;
}

llvm::Value* CpuEmitter::strip(ValueId v, llvm::Value* start) {
  if (auto it = cur_.find(v); it != cur_.end()) return it->second;  // computed in this strip
  const Type& t = type(v);
  if (!t.is_tile()) return b_.CreateVectorSplat(static_cast<unsigned>(W_), scalar(v));
  auto* raw = b_.CreateAlignedLoad(vec(mem_type(t.elem)), elem_ptr(buf(v), t.elem, start), llvm::Align(4));
  return t.elem == Elem::I1 ? b_.CreateICmpNE(raw, llvm::Constant::getNullValue(raw->getType())) : raw;
}

void CpuEmitter::put_strip(ValueId v, llvm::Value* start, llvm::Value* x) {
  const Type& t = type(v);
  if (t.elem == Elem::I1) x = b_.CreateZExt(x, vec(b_.getInt8Ty()));
  b_.CreateAlignedStore(x, elem_ptr(buf(v), t.elem, start), llvm::Align(4));
}

llvm::Value* CpuEmitter::in_tile(llvm::Value* start, int64_t n) {
  std::vector<llvm::Constant*> iota;
  for (int i = 0; i < W_; ++i) iota.push_back(b_.getInt64(i));
  auto* lanes = b_.CreateAdd(b_.CreateVectorSplat(static_cast<unsigned>(W_), start), llvm::ConstantVector::get(iota));
  return b_.CreateICmpSLT(lanes, b_.CreateVectorSplat(static_cast<unsigned>(W_), b_.getInt64(n)));
}

int64_t CpuEmitter::strip_numel(const Inst& in) const {
  const KShape shape = op_info(in.op).shape;
  if (shape == KShape::Reduce) return strip_reducible(in) ? type(in.operands[0]).numel() : 0;
  if (shape == KShape::Store) return type(in.operands[1]).is_tile() ? type(in.operands[1]).numel() : 0;
  if (!(elementwise(shape) || shape == KShape::Splat || shape == KShape::Range || shape == KShape::Load)) return 0;
  const Type& t = type(in.results[0]);
  return t.is_tile() ? t.numel() : 0;
}

bool CpuEmitter::hoistable_scalar(const Inst& in) const {
  if (in.results.size() != 1 || type(in.results[0]).is_tile()) return false;
  const KShape shape = op_info(in.op).shape;
  // (A load of an output reads what the kernel stored: it stays in order.)
  return elementwise(shape) || shape == KShape::Const || shape == KShape::Dim || shape == KShape::ProgramId ||
         (shape == KShape::Load && !k_.params[in.index].output);
}
}  // namespace tessera::kir::detail

namespace tessera::kir {

std::unique_ptr<llvm::Module> emit_cpu_kernel(const Kernel& k, const std::string& fn_name, llvm::LLVMContext& ctx,
                                              const CpuTarget& target) {
  auto errors = verify(k);
  if (!errors.empty()) throw std::invalid_argument("cpu emitter: kernel @" + k.name + ": " + errors.front());
  auto m = std::make_unique<llvm::Module>(fn_name, ctx);
  detail::CpuEmitter(k, *m, target).run(fn_name);
  return m;
}

}  // namespace tessera::kir
