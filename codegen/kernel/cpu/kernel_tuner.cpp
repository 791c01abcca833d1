#include "codegen/kernel/cpu/kernel_tuner.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "codegen/kernel/cpu/cpu_launch.h"
#include "codegen/kernel/cpu/region_kernel.h"

namespace tessera::kir {

namespace {

// Inputs of the region's types at these symbols' values, every element 1
// (no denormals, NaNs or infinities to time instead of the kernel).
std::vector<Value> synthetic_inputs(const Region& r, const std::vector<int64_t>& sym) {
  std::vector<Value> in;
  for (const RegionType& t : r.inputs) {
    if (!t.tensor) {
      in.push_back(t.scalar == ScalarKind::Float ? Value::number(1.0)
                   : t.scalar == ScalarKind::Int ? Value::integer(1)
                                                 : Value::boolean(true));
      continue;
    }
    Shape shape;
    for (int d : t.dims) shape.push_back(d == kDimOne ? 1 : sym.at(static_cast<size_t>(d)));
    Value v = make_tensor(t.dtype, std::move(shape), false);
    TensorObj* tv = v.as_tensor();
    const int64_t n = tv->numel;
    for (int64_t i = 0; i < n; ++i) {
      switch (t.dtype) {
        case DType::F32: static_cast<float*>(tv->data())[i] = 1.0f; break;
        case DType::F16: static_cast<uint16_t*>(tv->data())[i] = 0x3C00; break;
        case DType::BF16: static_cast<uint16_t*>(tv->data())[i] = 0x3F80; break;
        case DType::I32: static_cast<int32_t*>(tv->data())[i] = 1; break;
        case DType::I64: static_cast<int64_t*>(tv->data())[i] = 1; break;
        case DType::Bool: static_cast<uint8_t*>(tv->data())[i] = 1; break;
      }
    }
    in.push_back(std::move(v));
  }
  return in;
}

// The best run of each variant, in microseconds. The variants take turns,
// a run each per round (at least 3 rounds, and at least 2 ms of runs per
// variant, at most 50 rounds), so that a moment when the machine is busy
// slows every variant alike instead of deciding the choice: a choice is
// kept in the cache for later runs.
std::vector<double> time_us(const std::vector<CpuRegionKernel>& ks, std::span<const Value> in,
                            const std::vector<int64_t>& sym) {
  for (const CpuRegionKernel& k : ks) k.run_bound(in, sym);  // warm: page faults of the outputs, caches
  std::vector<double> best(ks.size(), 1e300), total(ks.size(), 0);
  for (int round = 0; round < 50; ++round) {
    bool enough = round >= 3;
    for (size_t i = 0; i < ks.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      ks[i].run_bound(in, sym);
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      best[i] = std::min(best[i], us);
      total[i] += us;
      enough = enough && total[i] >= 2000;
    }
    if (enough) break;
  }
  return best;
}

// The thread split: the launcher runs a grid of fewer than
// kParallelMinPrograms programs on the calling thread, which is right for
// short programs; for each such layout with more than one program, every
// core is tried too. A larger grid keeps the launcher's every core: the
// timing runs beside the program, whose own kernels may keep the other
// cores busy, so a serial variant could time as well as a parallel one and
// then, kept in the cache, run alone on an idle machine.
void add_thread_splits(const Region& r, const std::vector<int64_t>& sym, std::vector<TuneChoice>& out) {
  const size_t layouts = out.size();
  for (size_t i = 0; i < layouts; ++i) {
    RegionLowering opt;
    opt.tile = out[i].tile;
    opt.flat = out[i].flat;
    const std::vector<int64_t> g = lower_region(r, "region", opt).grid_extents(sym);
    const int64_t programs = g[0] * g[1] * g[2];
    if (programs > 1 && programs < kParallelMinPrograms)
      out.push_back(TuneChoice{out[i].tile, kEveryCore, out[i].flat});
  }
}

std::string spec_str(const std::vector<std::optional<int64_t>>& spec) {
  std::string s;
  for (const auto& v : spec) s += v ? std::to_string(*v) + "," : "?,";
  return s;
}

}  // namespace

std::string TuneChoice::str() const {
  return "tile=" + std::to_string(tile) + " threads=" + std::to_string(threads) + " flat=" + (flat ? "1" : "0");
}

std::optional<TuneChoice> TuneChoice::parse(const std::string& s) {
  long long tile = 0;
  int threads = 0, flat = 0;
  if (std::sscanf(s.c_str(), "tile=%lld threads=%d flat=%d", &tile, &threads, &flat) != 3 || tile <= 0 ||
      tile > (1 << 20) || threads < kEveryCore || (flat != 0 && flat != 1))
    return std::nullopt;
  return TuneChoice{tile, threads, flat == 1};
}

std::vector<TuneChoice> tune_candidates(const Region& r, const std::vector<int64_t>& sym) {
  auto extent = [&](int d) { return d == kDimOne ? int64_t{1} : sym.at(static_cast<size_t>(d)); };
  // A row kernel's layout is fixed (a program per row, the row as one tile
  // when it is short enough): only the thread split to choose.
  if (r.has_row_ops()) {
    std::vector<TuneChoice> out = {TuneChoice{}};
    add_thread_splits(r, sym, out);
    return out;
  }
  const std::vector<int>& shape = r.type(r.outputs.at(0)).dims;
  int64_t total = 1;
  for (int d : shape) total *= extent(d);
  // lower_region's row-wise programs (rank >= 2): tiles of one row each.
  const bool rowwise = shape.size() >= 2 && shape.back() != kDimOne;
  const int64_t row = rowwise ? extent(shape.back()) : total;
  std::vector<TuneChoice> layouts;
  // A whole row per program (rounded up to 16 lanes), for rows of moderate
  // length; a row-wise tile longer than that would only compute masked-off
  // lanes.
  const int64_t whole = (row + 15) / 16 * 16;
  for (int64_t tile : {int64_t{1024}, int64_t{4096}})
    if (!rowwise || tile <= whole) layouts.push_back(TuneChoice{tile, 0, false});
  if (rowwise && whole >= 16 && whole <= 16384 && whole != 1024 && whole != 4096)
    layouts.push_back(TuneChoice{whole, 0, false});
  // Short rows: tiles of the flattened output instead.
  if (rowwise && row < 1024)
    for (int64_t tile : {int64_t{1024}, int64_t{4096}}) layouts.push_back(TuneChoice{tile, 0, true});
  std::vector<TuneChoice> out = {TuneChoice{}};  // K2's
  for (const TuneChoice& l : layouts)
    if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  add_thread_splits(r, sym, out);
  return out;
}

TuneOutcome tune_region(const Region& r, const std::vector<std::optional<int64_t>>& spec,
                        const std::vector<int64_t>& sym, KernelStore& store) {
  const std::string id = r.str() + "\nspec " + spec_str(spec);
  if (std::optional<std::string> note = store.load_note("tuning", id))
    if (std::optional<TuneChoice> c = TuneChoice::parse(*note)) return TuneOutcome{*c, {}};
  TuneOutcome out;
  const std::vector<Value> in = synthetic_inputs(r, sym);
  const std::vector<TuneChoice> candidates = tune_candidates(r, sym);
  std::vector<CpuRegionKernel> kernels;
  for (const TuneChoice& c : candidates) {
    RegionLowering opt;
    opt.tile = c.tile;
    opt.flat = c.flat;
    opt.symbol_values = spec;
    Kernel k = lower_region(r, "region", opt);
    auto stored = store.get(std::move(k), r.str());
    kernels.emplace_back(r, stored->kernel, stored->fn, c.threads);
  }
  const std::vector<double> us = time_us(kernels, in, sym);
  double best = 1e300;
  for (size_t i = 0; i < candidates.size(); ++i) {
    out.timings_us.emplace_back(candidates[i], us[i]);
    if (us[i] < best) {
      best = us[i];
      out.best = candidates[i];
    }
  }
  store.store_note("tuning", id, out.best.str());
  return out;
}

}  // namespace tessera::kir
