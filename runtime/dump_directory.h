// The directory a run's dump (--dump DIR, tsr_enable_dump) is written to:
// it must be a directory whose files can be written, made if missing. The
// CLI and the embedding API both check it before the run starts, so that a
// bad one fails at once, and both say why in the same plain words.
#pragma once

#include <optional>
#include <string>

namespace tessera {

// Makes `dir` (and its parents) if missing and checks that a file can be
// written in it. Returns nullopt when it can be used, else why not, naming
// the part of the path in the way: "that is a file, not a directory (...)",
// "cannot make this directory: /a/b is a file, not a directory",
// "cannot write files in this directory: no permission".
std::optional<std::string> dump_directory_problem(const std::string& dir);

// Why the system refused to make or write a file (an errno), in plain words.
std::string plain_file_error(int err);

}  // namespace tessera
