// The source line under an error message, with a caret under the column
// that failed: a syntax error's offending token, a runtime error's operator,
// call or index (FunctionProto::cols).
#pragma once

#include <string>
#include <string_view>

namespace tessera {

// The source line `line` (1-based) of `source`, without its newline; empty
// when there is no such line.
std::string_view source_line(std::string_view source, int line);

// `text` and a caret under column `col` (1-based), each line after `indent`
// and ending in a newline. A long line is cut to a window around the caret
// (an error at the end of a 10 MB line must not echo 10 MB); tabs are kept
// so that the caret lines up. Empty when `text` is empty or `col` lies
// outside it.
std::string caret_echo(std::string_view text, int col, std::string_view indent);

}  // namespace tessera
