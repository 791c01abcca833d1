// MaskFold: drops the masks of a kernel that no program can make false.
//
// The lowerings guard every tile's loads and stores with a mask (`offset <
// extent`) because a K2 kernel does not know its dims. In a K3 kernel the
// dims are constants, and where the tile divides the extent every lane of
// every program is in bounds: the masked loads, stores and selects only
// cost (masked memory operations, the mask tiles kept beside the data).
// This pass bounds each i64 value (constants, K3 dims, program ids within
// their grid extents, ranges, loop induction variables within their loops'
// bounds, and + - * / % of those) and, for a comparison whose operands'
// bounds decide it for every lane, removes the mask from loads and stores
// and replaces a select by the value it always picks. Dead pure
// instructions are removed afterwards. On a K2 kernel it changes nothing
// where an extent is a dim.
#pragma once

#include "codegen/kernel/kernel_ir.h"

namespace tessera::kir {

// Returns the number of masks and selects removed.
int fold_masks(Kernel& k);

}  // namespace tessera::kir
