// MaskFold (codegen/kernel/mask_fold.h): kernel IR in, kernel IR out. Masks
// go where the dims are constants and every lane of every program is in
// bounds; they stay where a dim is a parameter (K2), where the tile does not
// divide the extent, and where a loop's last chunk runs past the row.
#include <gtest/gtest.h>

#include <string>

#include "codegen/kernel/kernel_text.h"
#include "codegen/kernel/kernel_verify.h"
#include "codegen/kernel/mask_fold.h"

namespace tessera::kir {
namespace {

// y = relu-like select of x, one program per 32 elements; DIMS is replaced.
const char* kChunks = R"(kernel @chunks
  dims DIMS
  in %x : f32[D]
  out %y : f32[D]
  grid [cdiv(D, 32)]
{
  %p = program_id 0 : i64
  %t = const 32 : i64
  %c0 = mul %p, %t : i64
  %lanes = range : tile<32xi64>
  %c0s = splat %c0 : tile<32xi64>
  %off = add %c0s, %lanes : tile<32xi64>
  %d = dim D : i64
  %ds = splat %d : tile<32xi64>
  %in = cmp.lt %off, %ds : tile<32xi1>
  %v = load %x[%off], mask %in : tile<32xf32>
  %z = const 0 : f32
  %zs = splat %z : tile<32xf32>
  %w = select %in, %v, %zs : tile<32xf32>
  store %y[%off], %w, mask %in
}
)";

const char* kChunksFolded = R"(kernel @chunks
  dims D=64
  in %x : f32[D]
  out %y : f32[D]
  grid [cdiv(D, 32)]
{
  %p = program_id 0 : i64
  %t = const 32 : i64
  %c0 = mul %p, %t : i64
  %lanes = range : tile<32xi64>
  %c0s = splat %c0 : tile<32xi64>
  %off = add %c0s, %lanes : tile<32xi64>
  %v = load %x[%off] : tile<32xf32>
  store %y[%off], %v
}
)";

// A row's sum over chunks of 256 in a loop, one program per row.
const char* kRowLoop = R"(kernel @row_sum
  dims DIMS
  in %x : f32[N, D]
  out %y : f32[N]
  grid [N]
{
  %row = program_id 0 : i64
  %d = dim D : i64
  %base = mul %row, %d : i64
  %zero = const 0 : i64
  %step = const 256 : i64
  %fzero = const 0 : f32
  %lanes = range : tile<256xi64>
  %ds = splat %d : tile<256xi64>
  %zs = splat %fzero : tile<256xf32>
  %s = for %k = %zero to %d step %step iter(%s0 = %fzero) {
    %ks = splat %k : tile<256xi64>
    %col = add %ks, %lanes : tile<256xi64>
    %in = cmp.lt %col, %ds : tile<256xi1>
    %bk = add %base, %k : i64
    %bks = splat %bk : tile<256xi64>
    %off = add %bks, %lanes : tile<256xi64>
    %v = load %x[%off], mask %in, other %zs : tile<256xf32>
    %cs = reduce.sum %v, axis 0 : f32
    %s1 = add %s0, %cs : f32
    yield %s1
  }
  store %y[%row], %s
}
)";

std::string with_dims(const char* text, const std::string& dims) {
  std::string s = text;
  s.replace(s.find("DIMS"), 4, dims);
  return s;
}

Kernel parsed(const std::string& text) {
  Kernel k = parse(text);
  const auto errors = verify(k);
  EXPECT_TRUE(errors.empty()) << errors.front();
  return k;
}

// Folds and verifies; returns the folds and the printed result.
std::pair<int, std::string> folded(const std::string& text) {
  Kernel k = parsed(text);
  const int n = fold_masks(k);
  const auto errors = verify(k);
  EXPECT_TRUE(errors.empty()) << errors.front() << "\n" << print(k);
  return {n, print(k)};
}

TEST(MaskFold, DropsMasksWhereTheTileDividesAConstantExtent) {
  const auto [n, text] = folded(with_dims(kChunks, "D=64"));
  EXPECT_EQ(n, 3);  // the load's and the store's masks, the select
  EXPECT_EQ(text, kChunksFolded);
}

TEST(MaskFold, KeepsMasksOfTheLastPartialTile) {
  const std::string in = with_dims(kChunks, "D=70");
  const auto [n, text] = folded(in);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(text, print(parsed(in)));
}

TEST(MaskFold, KeepsMasksWhereADimIsAParameter) {
  const std::string in = with_dims(kChunks, "D");
  const auto [n, text] = folded(in);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(text, print(parsed(in)));
}

TEST(MaskFold, BoundsALoopsInductionVariableByItsLastChunk) {
  // 1024 = 4 chunks of 256: the last starts at 768, in bounds to 1023.
  const auto [n, text] = folded(with_dims(kRowLoop, "N=8, D=1024"));
  EXPECT_EQ(n, 1);
  EXPECT_NE(text.find("%v = load %x[%off] : tile<256xf32>"), std::string::npos) << text;
  EXPECT_EQ(text.find("cmp.lt"), std::string::npos) << text;
  // 1000: the last chunk starts at 768 and runs past the row.
  const std::string partial = with_dims(kRowLoop, "N=8, D=1000");
  const auto [m, kept] = folded(partial);
  EXPECT_EQ(m, 0);
  EXPECT_EQ(kept, print(parsed(partial)));
}

}  // namespace
}  // namespace tessera::kir
