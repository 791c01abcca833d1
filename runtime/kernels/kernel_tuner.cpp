#include "runtime/kernels/kernel_tuner.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace tessera::kernels {

namespace {

constexpr const char* kKind = "tuning";

std::string identity(const std::string& arch, const Region& r, const DimSpec& spec) {
  return "arch " + arch + "\nsymbols " + dims_text(spec) + "\n" + r.str();
}

}  // namespace

std::optional<KernelVariant> KernelTuner::kept(const std::string& arch, const Region& r, const DimSpec& spec) const {
  if (std::optional<std::string> note = notes_.load_note(kKind, identity(arch, r, spec)))
    return KernelVariant::parse(*note);
  return std::nullopt;
}

void KernelTuner::keep(const std::string& arch, const Region& r, const DimSpec& spec, const KernelVariant& v) const {
  notes_.store_note(kKind, identity(arch, r, spec), v.str());
}

TuneOutcome KernelTuner::fastest(const std::vector<KernelVariant>& candidates,
                                 const std::function<double(size_t)>& time_ms, const TimingPlan& plan) {
  const size_t n = candidates.size();
  constexpr double kNever = std::numeric_limits<double>::infinity();
  std::vector<double> best(n, kNever), total(n, 0);
  std::vector<std::string> why(n);
  for (int round = 0; round < std::max(1, plan.max_rounds); ++round) {
    bool enough = round + 1 >= plan.min_rounds;
    for (size_t i = 0; i < n; ++i) {
      if (!why[i].empty()) continue;
      try {
        const double ms = time_ms(i);
        best[i] = std::min(best[i], ms);
        total[i] += ms;
        enough = enough && total[i] >= plan.min_ms;
      } catch (const std::exception& e) {
        why[i] = e.what();
        if (why[i].empty()) why[i] = "refused";
      }
    }
    if (enough) break;
  }
  TuneOutcome out;
  double fastest = kNever;
  for (size_t i = 0; i < n; ++i) {
    if (!why[i].empty()) {
      out.refused.emplace_back(candidates[i], why[i]);
      continue;
    }
    out.timings_ms.emplace_back(candidates[i], best[i]);
    if (best[i] < fastest) fastest = best[i], out.best = candidates[i];
  }
  if (out.timings_ms.empty())
    throw std::runtime_error("tuning: no variant of the region could run" +
                             (out.refused.empty() ? std::string() : ": " + out.refused.front().second));
  return out;
}

}  // namespace tessera::kernels
