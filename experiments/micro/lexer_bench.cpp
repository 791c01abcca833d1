// Lexer throughput, as a Google Benchmark: tokens per second over inputs of
// growing size. The lexer must be linear in its input; that is a property to
// measure, not to assert in a unit test (a wall-clock bound there either
// never fails or fails on a loaded machine), so it lives here. Linear
// behaviour shows as a flat items_per_second across the sizes (and as an
// O(N) fit in the complexity report); quadratic behaviour as a rate that
// falls with N.
//
//   cmake --build build --target lexer_bench && build/experiments/micro/lexer_bench
#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>

#include "vm/frontend/lexer.h"

namespace {

using tessera::Lexer;
using tessera::TokenKind;

// The line the lexer test used: identifiers, an int with separators, a
// float, a string, brackets, operators and a comment (16 tokens).
constexpr const char* kLine = "x = foo(1_000, 2.5, \"str\") + y[3] # comment\n";

std::string repeat_lines(size_t bytes) {
  std::string src;
  const std::string line = kLine;
  src.reserve(bytes + line.size());
  while (src.size() < bytes) src += line;
  return src;
}

size_t lex_to_end(const std::string& src) {
  Lexer lx(src);
  size_t n = 0;
  while (lx.next().kind != TokenKind::Eof) ++n;
  return n;
}

void BM_LexMixedLines(benchmark::State& state) {
  const std::string src = repeat_lines(static_cast<size_t>(state.range(0)));
  size_t tokens = 0;
  for (auto _ : state) {
    tokens = lex_to_end(src);
    benchmark::DoNotOptimize(tokens);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * tokens));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * src.size()));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_LexMixedLines)->RangeMultiplier(8)->Range(1 << 12, 1 << 24)->Complexity(benchmark::oN);

// The single-token extremes the test checks for correctness: one long
// string literal, one long comment, a long run of blank lines.
void BM_LexLongString(benchmark::State& state) {
  const std::string src = "\"" + std::string(static_cast<size_t>(state.range(0)), 'a') + "\"";
  for (auto _ : state) benchmark::DoNotOptimize(lex_to_end(src));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * src.size()));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_LexLongString)->RangeMultiplier(8)->Range(1 << 12, 1 << 24)->Complexity(benchmark::oN);

void BM_LexLongComment(benchmark::State& state) {
  const std::string src = "#" + std::string(static_cast<size_t>(state.range(0)), '\xff') + "\nx";
  for (auto _ : state) benchmark::DoNotOptimize(lex_to_end(src));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * src.size()));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_LexLongComment)->RangeMultiplier(8)->Range(1 << 12, 1 << 24)->Complexity(benchmark::oN);

void BM_LexBlankLines(benchmark::State& state) {
  const std::string blank(static_cast<size_t>(state.range(0)), '\n');
  const std::string src = blank + "x" + blank;
  for (auto _ : state) benchmark::DoNotOptimize(lex_to_end(src));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * src.size()));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_LexBlankLines)->RangeMultiplier(8)->Range(1 << 12, 1 << 24)->Complexity(benchmark::oN);

}  // namespace

BENCHMARK_MAIN();
