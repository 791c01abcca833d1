// The CUDA emitter's tensor-core matrix product: a `dot` of f16 or bf16
// tiles into an f32 accumulator, whose shapes are whole m16n8k16 tiles,
// runs on mma.sync instead of one CUDA-core product per result element.
//
// Operands are staged in shared memory as halves (A [M][K], B [K][N] or
// [N][K]) with the accumulator C [M][N] in f32. An operand that is a block
// load used only here has an area of its own, which cp.async fills (16
// bytes per copy, zero-filled past the matrix) from where the load stands
// in the kernel: the copy flies while the work between the load and the
// dot runs (attention's V block during the scores and the softmax; Q's,
// loaded before the key loop, once), and the dot waits for it; it is never
// held in registers. Other operands arrive spread over the block's threads
// (the emitter's one layout, cuda_emitter.h) and are written to scratch.
// The 16x8 result tiles are dealt to the warps round-robin; a warp takes
// A's fragment with ldmatrix.x4 and B's with ldmatrix.x2.trans from [K][N]
// (the fragment wants k along its columns) or ldmatrix.x2 from [N][K],
// walks k in steps of 16
// with one mma each, and writes its tile of D over C's in place (each tile
// is read and written by one warp only). After a barrier every thread
// reads back the result elements it holds.
//
// The warp-collective wrappers (tessera_cuda.h) are called by every thread
// of the block the same number of times, as the host emulation runs them
// between block-wide barriers: a warp with no tile left in the last round
// computes a tile again and does not write it.
#include <algorithm>
#include <unordered_map>
#include <utility>

#include "codegen/kernel/cuda/cuda_emitter_internal.h"

namespace tessera::kir::detail {

bool CudaEmitter::mma_fits(const Inst& in) const {
  const Type& a = type(in.operands[0]);
  const Type& b = type(in.operands[1]);
  const Type& c = type(in.operands[2]);
  const bool half = a.elem == Elem::F16 || a.elem == Elem::BF16;
  return half && c.elem == Elem::F32 && a.shape[0] % 16 == 0 && a.shape[1] % 16 == 0 && b.shape[1] % 8 == 0;
}

namespace {

// Every use of each value, and where each value is defined (its
// instruction and block), over the kernel's nested blocks.
struct UseDef {
  std::unordered_map<ValueId, int> uses;
  std::unordered_map<ValueId, std::pair<const Inst*, const Block*>> def;
  void walk(const Block& b) {
    for (const Inst& in : b.insts) {
      for (ValueId o : in.operands) ++uses[o];
      for (ValueId r : in.results) def[r] = {&in, &b};
      if (in.body) walk(*in.body);
    }
  }
};

// A staged load in the body of an innermost loop whose first row (or
// column) is the loop's induction variable, every other operand made
// before the loop or a constant, is double-buffered: the copy of the next
// iteration's block flies while this one computes. Returns the loop (null:
// not pipelined), the induction variable's operand (1 or 2) and the
// operands that are constants made in the body.
struct Pipeline {
  const Inst* loop = nullptr;
  int iv_operand = 0;
  std::vector<std::pair<size_t, const Inst*>> constants;
};
Pipeline pipeline_of(const Inst& load, const UseDef& ud) {
  const Block* body = ud.def.at(load.results[0]).second;
  const Inst* loop = nullptr;
  for (const auto& [v, d] : ud.def)
    if (d.first->op == KOp::For && d.first->body.get() == body) loop = d.first;
  if (!loop) return {};
  for (const Inst& in : body->insts)
    if (in.op == KOp::For) return {};  // not innermost
  Pipeline p;
  const ValueId iv = body->args[0];
  for (size_t i = 0; i < load.operands.size(); ++i) {
    const ValueId o = load.operands[i];
    if (o == iv && (i == 1 || i == 2) && !p.iv_operand) {
      p.iv_operand = static_cast<int>(i);
      continue;
    }
    if (std::find(body->args.begin(), body->args.end(), o) != body->args.end()) return {};
    auto d = ud.def.find(o);
    if (d == ud.def.end() || d->second.second != body) continue;  // made before the loop
    if (d->second.first->op != KOp::Const) return {};
    p.constants.emplace_back(i, d->second.first);
  }
  if (!p.iv_operand) return {};
  p.loop = loop;
  return p;
}

}  // namespace

void CudaEmitter::plan_staged_loads() {
  UseDef ud;
  ud.walk(k_.body);
  std::vector<const Block*> blocks = {&k_.body};
  while (!blocks.empty()) {
    const Block* b = blocks.back();
    blocks.pop_back();
    for (const Inst& in : b->insts) {
      if (in.body) blocks.push_back(in.body.get());
      if (in.op != KOp::Dot || !mma_fits(in)) continue;
      for (int operand = 0; operand < 2; ++operand) {
        const ValueId v = in.operands[static_cast<size_t>(operand)];
        auto d = ud.def.find(v);
        if (d == ud.def.end() || d->second.first->op != KOp::BlockLoad || ud.uses[v] != 1) continue;
        const Inst& bl = *d->second.first;
        if (k_.params[static_cast<size_t>(bl.index)].output) continue;  // what this program stored: fenced loads
        // Copied in 16-byte pieces along the matrix's rows: A as [M][K], B
        // as [K][N] or, transposed, [N][K]; A transposed is not staged.
        const Type& t = type(v);
        const int64_t row_len = bl.transposed ? t.shape[0] : t.shape[1];
        if ((operand == 0 && bl.transposed) || row_len % 8 != 0) continue;
        // wgmma's operands start on 128 bytes (a TMA box's destination),
        // after the mbarriers' area (cuda_emitter_tma.cpp).
        const bool interleaved = wgmma_fits(in);
        if (interleaved) staged_bytes_ = std::max<int64_t>(kBarrierBytes, (staged_bytes_ + 127) / 128 * 128);
        const int64_t bytes = interleaved ? (t.numel() * 2 + 127) / 128 * 128 : aligned16(t.numel() * 2);
        StagedLoad st{staged_bytes_, &bl, {}, nullptr, 0, {}, bytes, interleaved, -1, -1, {}, false, -1, {}};
        const Pipeline pl = pipeline_of(bl, ud);
        st.loop = pl.loop;
        st.iv_operand = pl.iv_operand;
        for (const auto& [i, c] : pl.constants) st.literals[i] = int_literal(c->ivalue, Elem::I64);
        if (st.interleaved) plan_tma(st, bl.transposed ? t.shape[1] : t.shape[0]);
        staged_bytes_ += st.loop ? 2 * st.bytes : st.bytes;
        staged_loads_[v] = std::move(st);
      }
    }
  }
}

std::string CudaEmitter::staged_operand(const StagedLoad& st, size_t i) {
  auto lit = st.literals.find(i);
  return lit != st.literals.end() ? lit->second : name(st.load->operands[i]);
}

void CudaEmitter::copy_block(const Inst& bl, const std::string& dst, const std::string& r0, const std::string& c0,
                             const std::string& bar) {
  const Type& t = type(bl.results[0]);
  const Param& p = k_.params[static_cast<size_t>(bl.index)];
  const StagedLoad& st = staged_loads_.at(bl.results[0]);
  // The block as the matrix holds it: rows along the matrix's rows.
  const int64_t rows = bl.transposed ? t.shape[1] : t.shape[0], cols = bl.transposed ? t.shape[0] : t.shape[1];
  const std::string param = "tsr_p" + std::to_string(bl.index);
  const char* T = mem_type(p.elem);
  auto op = [&](size_t i) { return i == 1 ? r0 : i == 2 ? c0 : staged_operand(st, i); };
  // The copying threads: the block's (all of them), or the producer warp's.
  const std::string tid = producer_copy_ ? "tsr_pl" : "tsr_t";
  const int by = producer_copy_ ? 32 : threads_;
  line() << "{";
  ++indent_;
  line() << T << "* tsr_d = " << dst << ";";
  if (st.map >= 0) {  // TMA where the block allows it, else as below (cuda_emitter_tma.cpp)
    copy_block_tma(bl, rows, cols, op, bar);
    ++indent_;
  }
  // Rows that start on 16-byte boundaries are copied in pieces of 8
  // elements by cp.async (a piece past the matrix's columns partly, the
  // rest zeros); other matrices element by element.
  line() << "if (((" << op(0) << " | " << op(5) << " | " << op(2) << ") & 7) == 0) {";
  ++indent_;
  line() << "for (int tsr_q = " << tid << "; tsr_q < " << rows * cols / 8 << "; tsr_q += " << by << ") {";
  ++indent_;
  line() << "const int tsr_a = tsr_q / " << cols / 8 << ", tsr_b = (tsr_q % " << cols / 8 << ") * 8;";
  line() << "const tsr_i64 tsr_mr = " << op(1) << " + tsr_a, tsr_mc = " << op(2) << " + tsr_b;";
  line() << "tsr_i64 tsr_n = tsr_mr < " << op(3) << " ? " << op(4) << " - tsr_mc : 0;";
  line() << "tsr_n = tsr_n < 0 ? 0 : (tsr_n > 8 ? 8 : tsr_n);";
  // Where piece (row a, columns b..b+7) goes: row-major, or wgmma's core
  // matrices (whose rows are 16 bytes: a piece is one row of one).
  const std::string piece = st.interleaved ? interleaved_index("tsr_a", "tsr_b", rows) : "tsr_a * " + std::to_string(cols) + " + tsr_b";
  line() << "const int tsr_o = " << piece << ";";
  line() << "if (tsr_n > 0) tsr_cp_async16(tsr_d + tsr_o, " << param << " + " << op(0) << " + tsr_mr * " << op(5)
         << " + tsr_mc, (int)tsr_n * 2);";
  line() << "else { unsigned* tsr_z = (unsigned*)(tsr_d + tsr_o); tsr_z[0] = tsr_z[1] = tsr_z[2] = tsr_z[3] = 0u; }";
  close();
  --indent_;
  line() << "} else {";
  ++indent_;
  line() << "for (int tsr_q = " << tid << "; tsr_q < " << rows * cols << "; tsr_q += " << by << ") {";
  ++indent_;
  line() << "const tsr_i64 tsr_mr = " << op(1) << " + tsr_q / " << cols << ", tsr_mc = " << op(2) << " + tsr_q % " << cols
         << ";";
  const std::string elem =
      st.interleaved ? interleaved_index("tsr_q / " + std::to_string(cols), "tsr_q % " + std::to_string(cols), rows) : "tsr_q";
  line() << "tsr_d[" << elem << "] = (tsr_mr < " << op(3) << " && tsr_mc < " << op(4) << ") ? " << param << "["
         << op(0) << " + tsr_mr * " << op(5) << " + tsr_mc] : (" << T << ")0;";
  close();
  close();
  if (producer_copy_) {
    // Each of the producer's threads lands its copies and makes them
    // visible to wgmma's proxy before it arrives.
    line() << "tsr_cp_async_commit();";
    line() << "tsr_cp_async_wait<0>();";
    line() << "tsr_fence_proxy_async();";
    line() << "tsr_mbar_arrive(tsr_bars + " << bar << ");";
    close();
    close();
    return;
  }
  if (st.map >= 0) {
    line() << "if (tsr_t == 0) tsr_mbar_arrive(tsr_bars + " << bar << ");";
    close();
  }
  // One group per copy in every thread (empty where it copied nothing),
  // so that the dots' wait_group counts hold.
  line() << "tsr_cp_async_commit();";
  if (st.map >= 0) line() << "tsr_pending |= 1u << " << bar << ";";
  close();
}

void CudaEmitter::stage_block_load(const Inst& bl) {
  StagedLoad& st = staged_loads_.at(bl.results[0]);
  const char* T = mem_type(k_.params[static_cast<size_t>(bl.index)].elem);
  st.ptr = "tsr_s" + std::to_string(tmp_++);
  const std::string cast = std::string("(") + T + "*)(TSR_SMEM + ";
  if (!st.loop) {
    line() << T << "* " << st.ptr << " = " << cast << st.at << ");";
    st.bar_now = std::to_string(st.bar);
    copy_block(bl, st.ptr, name(bl.operands[1]), name(bl.operands[2]), barrier_at(st.bar_now));
    inflight_.push_back({bl.results[0], false});
    return;
  }
  // This iteration's block is in the buffer of its parity (its copy was
  // started before the loop or by the iteration before); the next one's
  // goes to the other.
  const Inst& f = *st.loop;
  const std::string iv = name(f.body->args[0]), step = name(f.operands[2]);
  const std::string par = "tsr_par" + std::to_string(tmp_++);
  line() << "const int " << par << " = " << iteration_.at(&f) << " & 1;";
  line() << T << "* " << st.ptr << " = " << cast << st.at << " + " << par << " * " << st.bytes << ");";
  if (st.by_producer) {  // the producer warp copies it (cuda_emitter_producer.cpp)
    st.bar_now = "(" + std::to_string(st.bar) + " + " + par + ")";
    st.empty_now = "(" + std::to_string(st.empty) + " + " + par + ")";
    return;
  }
  const std::string next = "(" + iv + " + " + step + ")";
  st.bar_now = "(" + std::to_string(st.bar) + " + " + par + ")";
  // With TMA, only a next iteration that comes is copied (each copy's
  // arrival is waited for once: the barriers' phases stay in step).
  if (st.map >= 0) {
    line() << "if (" << next << " < " << name(f.operands[1]) << ") {";
    ++indent_;
  }
  copy_block(bl, cast + std::to_string(st.at) + " + (1 - " + par + ") * " + std::to_string(st.bytes) + ")",
             st.iv_operand == 1 ? next : staged_operand(st, 1), st.iv_operand == 2 ? next : staged_operand(st, 2),
             barrier_at("(" + std::to_string(st.bar) + " + 1 - " + par + ")"));
  if (st.map >= 0) {
    --indent_;
    line() << "} else {";
    line() << "  tsr_cp_async_commit();  // the group the copy would be";
    line() << "}";
  }
  inflight_.push_back({bl.results[0], true});
}

// Before `loop`: the first iteration's copies of its pipelined loads, in
// the order the body starts them, into buffer 0.
void CudaEmitter::start_pipelines(const Inst& loop) {
  bool any = false;
  for (const Inst& in : loop.body->insts) {
    if (in.op != KOp::BlockLoad) continue;
    auto it = staged_loads_.find(in.results[0]);
    if (it == staged_loads_.end() || it->second.loop != &loop) continue;
    const StagedLoad& st = it->second;
    any = true;
    if (st.by_producer) continue;
    const char* T = mem_type(k_.params[static_cast<size_t>(in.index)].elem);
    const std::string lo = name(loop.operands[0]);
    copy_block(in, std::string("(") + T + "*)(TSR_SMEM + " + std::to_string(st.at) + ")",
               st.iv_operand == 1 ? lo : staged_operand(st, 1), st.iv_operand == 2 ? lo : staged_operand(st, 2),
               barrier_at(std::to_string(st.bar)));
    inflight_.push_back({in.results[0], false});
  }
  if (!any) return;
  const std::string& it = iteration_[&loop] = "tsr_it" + std::to_string(tmp_++);
  line() << "int " << it << " = 0;";
}

std::pair<const CudaEmitter::StagedLoad*, const CudaEmitter::StagedLoad*> CudaEmitter::wait_staged(const Inst& in) {
  // A staged block load's copy was started where the load stands: wait
  // for this thread's copies here, and for every thread's at the barrier.
  auto staged = [&](ValueId v) -> const StagedLoad* {
    auto it = staged_loads_.find(v);
    return it == staged_loads_.end() ? nullptr : &it->second;
  };
  const StagedLoad* la = staged(in.operands[0]);
  const StagedLoad* lb = staged(in.operands[1]);
  size_t last = 0;  // one past the newest copy this dot reads (not a next iteration's), in inflight_
  for (size_t i = 0; i < inflight_.size(); ++i)
    if (!inflight_[i].next && ((la && inflight_[i].load == in.operands[0]) || (lb && inflight_[i].load == in.operands[1])))
      last = i + 1;
  if (last) {
    line() << "tsr_cp_async_wait<" << inflight_.size() - last << ">();";
    inflight_.erase(inflight_.begin(), inflight_.begin() + static_cast<std::ptrdiff_t>(last));
  }
  for (const StagedLoad* st : {la, lb})
    if (st && st->map >= 0) wait_tma(*st);
  return {la, lb};
}

CudaEmitter::TensorCoreDot CudaEmitter::stage_tensor_core_dot(const Inst& in, bool interleaved) {
  const Type& a = type(in.operands[0]);
  TensorCoreDot d;
  d.M = a.shape[0], d.K = a.shape[1], d.N = type(in.operands[1]).shape[1];
  const int64_t a_bytes = aligned16(d.M * d.K * 2), b_bytes = aligned16(d.K * d.N * 2);
  const auto [la, lb] = wait_staged(in);
  auto put = [&](ValueId v, int64_t at) { return interleaved ? stage_interleaved(v, at, a.elem) : stage(v, at, a.elem); };
  d.sa = la ? la->ptr : put(in.operands[0], 0);
  d.sb = lb ? lb->ptr : put(in.operands[1], a_bytes);
  d.b_by_columns = lb && lb->load->transposed;
  d.sc = stage(in.operands[2], a_bytes + b_bytes, Elem::F32);
  return d;
}

void CudaEmitter::read_back_dot(const Inst& in, const std::string& sc) {
  const int64_t n = type(in.operands[2]).numel();
  barrier();
  declare(in.results[0]);
  open_lanes(n, false);
  line() << name(in.results[0]) << "[tsr_j] = " << sc << "[tsr_e < " << n << " ? tsr_e : 0];";
  close();
  barrier();  // the staging area is free again
}

void CudaEmitter::dot_mma(const Inst& in) {
  const Type& a = type(in.operands[0]);
  const TensorCoreDot d = stage_tensor_core_dot(in, false);
  const int64_t M = d.M, K = d.K, N = d.N;
  const std::string &sa = d.sa, &sb = d.sb, &sc = d.sc;
  const bool b_by_columns = d.b_by_columns;
  barrier();
  const int warps = threads_ / 32;
  const int64_t tiles = (M / 16) * (N / 8), rounds = (tiles + warps - 1) / warps;
  const char* mma = a.elem == Elem::F16 ? "tsr_mma_f16" : "tsr_mma_bf16";
  line() << "{";
  ++indent_;
  line() << "const int tsr_lane = tsr_t % 32, tsr_warp = tsr_t / 32;";
  line() << "for (int tsr_r = 0; tsr_r < " << rounds << "; ++tsr_r) {";
  ++indent_;
  line() << "const int tsr_want = tsr_r * " << warps << " + tsr_warp;";
  line() << "const int tsr_tile = tsr_want < " << tiles << " ? tsr_want : " << tiles - 1 << ";";
  line() << "const int tsr_m0 = (tsr_tile / " << N / 8 << ") * 16, tsr_n0 = (tsr_tile % " << N / 8 << ") * 8;";
  // C's fragment: rows lane/4 and lane/4 + 8, columns 2 (lane % 4) and the next.
  line() << "const int tsr_cr = tsr_m0 + tsr_lane / 4, tsr_cc = tsr_n0 + 2 * (tsr_lane % 4);";
  line() << "float tsr_acc[4] = {" << sc << "[tsr_cr * " << N << " + tsr_cc], " << sc << "[tsr_cr * " << N
         << " + tsr_cc + 1], " << sc << "[(tsr_cr + 8) * " << N << " + tsr_cc], " << sc << "[(tsr_cr + 8) * " << N
         << " + tsr_cc + 1]};";
  line() << "for (int tsr_k0 = 0; tsr_k0 < " << K << "; tsr_k0 += 16) {";
  ++indent_;
  // ldmatrix: lane l gives row l % 8 of 8x8 matrix l / 8. A's four are
  // (rows 0-7, 8-15) x (k 0-7, 8-15) in the order of the fragment's
  // registers; B's two are k 0-7 and 8-15 of its 8 columns: transposed
  // from [K][N] (rows are k), as they are from [N][K] (rows are n).
  line() << "unsigned tsr_fa[4], tsr_fb[2];";
  line() << "tsr_ldmatrix_x4(tsr_fa, " << sa << " + (tsr_m0 + tsr_lane % 16) * " << K << " + tsr_k0 + (tsr_lane / 16) * 8);";
  if (b_by_columns)
    line() << "tsr_ldmatrix_x2(tsr_fb, " << sb << " + (tsr_n0 + tsr_lane % 8) * " << K << " + tsr_k0 + ((tsr_lane / 8) % 2) * 8);";
  else
    line() << "tsr_ldmatrix_x2_trans(tsr_fb, " << sb << " + (tsr_k0 + tsr_lane % 16) * " << N << " + tsr_n0);";
  line() << mma << "(tsr_acc, tsr_fa, tsr_fb, tsr_acc);";
  close();
  line() << "if (tsr_want < " << tiles << ") {";
  ++indent_;
  line() << sc << "[tsr_cr * " << N << " + tsr_cc] = tsr_acc[0]; " << sc << "[tsr_cr * " << N
         << " + tsr_cc + 1] = tsr_acc[1];";
  line() << sc << "[(tsr_cr + 8) * " << N << " + tsr_cc] = tsr_acc[2]; " << sc << "[(tsr_cr + 8) * " << N
         << " + tsr_cc + 1] = tsr_acc[3];";
  close();
  close();
  --indent_;
  line() << "}";
  read_back_dot(in, sc);
}

}  // namespace tessera::kir::detail
