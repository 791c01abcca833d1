// The option a mistyped one most likely meant (`--jit-params` →
// `--jit-param`), for the usage error of an unknown option: the nearest
// known name by edit distance (Damerau: a swap of two neighbours is one
// edit), if it is near enough to be a typo.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tessera::cli {

// The name in `known` nearest `typed` (both as written, "--name"), or
// nullopt where none is within max(2, length/3) edits. A value after '=' in
// `typed` is ignored.
std::optional<std::string> nearest_option(const std::string& typed, const std::vector<std::string>& known);

// "unknown option '--jit-params' (did you mean '--jit-param'?)": the option
// as typed (without a value after '='), and the nearest of `known` if any.
std::string unknown_option_message(const std::string& typed, const std::vector<std::string>& known);

}  // namespace tessera::cli
