// host.cpp: a C++ host that embeds Tessera VM through tessera.hpp (the C++
// wrapper of the C ABI tessera.h).
//
// It wraps two host-owned std::vector<float> of 1M elements as tensors
// without copying, runs a script that defines step(x, w), calls it 100 times
// with the wrapped tensors and times each call, and shows that
//   - the script's writes to a wrapped tensor land in the host's vector,
//   - the host's writes to its vector are seen by the script,
//   - no tensor byte was copied (tsr_stat "tensor_bytes_copied" is 0),
// then shows a host function's exception becoming a script error, and prints
// the first lines of the JIT's statistics. Exit status 0 when the zero-copy
// checks hold.
//
// Build (docs/embedding.md, "Examples"):
//   cmake -S examples/embed/cpp -B build-embed-cpp -DCMAKE_PREFIX_PATH=/opt/tessera
//   cmake --build build-embed-cpp && ./build-embed-cpp/host
#include <tessera/tessera.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

// The script. All sources of a VM share one namespace: the host calls
// `step` and `element` and reads `steps` after running it.
constexpr std::string_view kScript = R"tsb(
let steps = 0

# One step of a toy update over x: the loss of tanh(x * w) * rate against x.
# The elementwise chain is fused into one kernel once the function is hot.
fn step(x, w) {
  let rate = learning_rate()          # a host function
  let y = tanh(x * w) * rate
  let d = y - x
  let loss = item(mean(d * d))
  x[0] = x[0] + 1.0                   # an element store: into the host's vector
  steps += 1
  return loss
}

fn element(t, i) {
  return t[i]
}

fn describe(name, n) {
  return name + ": " + str(n) + " elements"
}

print("script loaded")
)tsb";

constexpr int64_t kElements = int64_t{1} << 20;  // 1M floats, 4 MiB per tensor
constexpr int kCalls = 100;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main() {
  // The host's memory. Declared before the VM so that it outlives it: a
  // wrapped tensor's storage must stay valid as long as the VM may use it.
  std::vector<float> x(kElements), w(kElements);
  for (int64_t i = 0; i < kElements; ++i) {
    x[static_cast<size_t>(i)] = static_cast<float>(i % 1000) / 1000.0f;
    w[static_cast<size_t>(i)] = 0.5f;
  }
  x[0] = 0.0f;
  double learning_rate = 0.9;

  tessera::Options options;
  options.jit_params = {"hotcall=20"};  // compile step() after 20 calls (default 112)
  // print() output, each line prefixed (a line may arrive in pieces).
  options.out = [at_line_start = true](std::string_view s) mutable {
    for (char c : s) {
      if (at_line_start) std::cout << "[script] ";
      std::cout << c;
      at_line_start = c == '\n';
    }
  };
  options.err = [](std::string_view s) { std::cerr << "[vm-error] " << s; };

  try {
    tessera::VM vm(options);

    // A host function. Its arguments are borrowed; the Value it returns goes
    // to the script. A thrown exception becomes the script's runtime error.
    vm.register_function(
        "learning_rate",
        [&learning_rate](tessera::VM& v, std::span<const tessera::Value>) {
          if (learning_rate <= 0.0) {
            throw std::invalid_argument("learning rate must be positive, is " +
                                        std::to_string(learning_rate));
          }
          return v.value(learning_rate);
        },
        0, 0);

    vm.run(kScript, "step.tsb");

    // Wrap the host's vectors: no copy, the tensors' storage is the vectors'.
    const std::array<int64_t, 1> shape{kElements};
    tessera::Tensor xt = vm.wrap(x.data(), shape);
    tessera::Tensor wt = vm.wrap(w.data(), shape);
    std::cout << vm.call("describe", std::string_view{"x"}, kElements).as_str()
              << ", storage is the host's vector: "
              << (xt.data<float>() == x.data() ? "yes" : "NO") << "\n";

    // Call step(x, w) kCalls times through the function value (looked up
    // once), timing each call.
    tessera::Value step = vm.global("step");
    const std::array<tessera::Value, 2> args{xt, wt};
    std::vector<double> ms;
    ms.reserve(kCalls);
    double loss = 0.0;
    for (int i = 0; i < kCalls; ++i) {
      if (i == kCalls / 2) {
        // The host writes its own vector between calls; the script sees it.
        std::fill(w.begin(), w.end(), 0.25f);
        std::cout << "host: w := 0.25 before call " << i + 1 << "\n";
      }
      const auto t0 = std::chrono::steady_clock::now();
      loss = vm.call(step, args).as_float();
      const auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      if (i == 0 || i == kCalls / 2 - 1 || i == kCalls / 2 || i == kCalls - 1) {
        std::printf("call %3d: loss %.6f  %.3f ms\n", i + 1, loss, ms.back());
      }
    }

    const std::vector<double> early(ms.begin() + 1, ms.begin() + 20);
    const std::vector<double> late(ms.begin() + kCalls / 2, ms.end());
    std::printf("per call: first %.3f ms, median of calls 2-20 %.3f ms, median of calls %d-%d %.3f ms"
                " (%.2f GB/s of tensor inputs)\n",
                ms.front(), median(early), kCalls / 2 + 1, kCalls, median(late),
                2.0 * static_cast<double>(kElements) * sizeof(float) / (median(late) * 1e6));

    // The script's writes are in the host's vector: x[0] was 0 and each call
    // added 1. The script reads back what the host wrote.
    const int64_t steps = vm.global("steps").as_int();
    const std::array<tessera::Value, 2> probe{wt, vm.value(int64_t{12345})};
    const double w_seen = vm.call(vm.global("element"), probe).as_float();
    std::printf("host reads x[0] = %.1f after %lld steps; script reads w[12345] = %.2f\n",
                static_cast<double>(x[0]), static_cast<long long>(steps), w_seen);

    const int64_t copied = vm.stat("tensor_bytes_copied");
    std::printf("tensor_bytes_copied = %lld, tensors_wrapped = %lld, host_function_calls = %lld\n",
                static_cast<long long>(copied),
                static_cast<long long>(vm.stat("tensors_wrapped")),
                static_cast<long long>(vm.stat("host_function_calls")));
    if (copied != 0) std::cout << "note: tensor bytes were copied; expected none\n";

    // A host function's exception is the script's runtime error, which the
    // call throws as tessera::Error with the traceback.
    learning_rate = -1.0;
    try {
      vm.call(step, args);
      std::cout << "step() with a negative rate did not fail\n";
      return 1;
    } catch (const tessera::Error& e) {
      std::cout << "step() with a negative rate: " << tsr_status_name(e.status()) << ": "
                << e.what() << "\n" << e.traceback() << "\n";
    }

    // The JIT's report (the CLI's --stats), its first lines.
    std::istringstream report(vm.stats());
    std::string line;
    std::cout << "--- stats (first 20 lines) ---\n";
    for (int n = 0; n < 20 && std::getline(report, line); ++n) std::cout << line << "\n";

    const bool ok = x[0] == static_cast<float>(kCalls) && steps == kCalls && w_seen == 0.25 &&
                    xt.data<float>() == x.data();
    std::cout << (ok ? "zero copy: ok\n" : "zero copy: FAILED\n");
    // Leaving the block destroys the tensors and values, then the VM; x and
    // w, declared before it, go last.
    return ok ? 0 : 1;
  } catch (const tessera::Error& e) {
    std::cerr << "tessera error " << tsr_status_name(e.status()) << ": " << e.what() << "\n"
              << e.traceback() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
