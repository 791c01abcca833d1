// runtime/dump_directory: the check both --dump and tsr_enable_dump make
// before a run, and the plain words it answers with.
#include "runtime/dump_directory.h"

#include <gtest/gtest.h>
#include <cerrno>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using tessera::dump_directory_problem;

namespace {
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("dump_directory_test_" + std::to_string(::getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { fs::remove_all(path); }
};
}  // namespace

TEST(DumpDirectory, AMissingDirectoryIsMadeWithItsParents) {
  ScratchDir s;
  const fs::path dir = s.path / "a" / "b";
  EXPECT_EQ(dump_directory_problem(dir.string()), std::nullopt);
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_TRUE(fs::is_empty(dir)) << "the write probe is removed";
}

TEST(DumpDirectory, AFileIsNotADirectory) {
  ScratchDir s;
  std::ofstream(s.path / "f") << "x";
  EXPECT_EQ(dump_directory_problem((s.path / "f").string()),
            "that is a file, not a directory (give a directory: it is made if missing)");
}

TEST(DumpDirectory, AFileOnThePathIsNamed) {
  ScratchDir s;
  std::ofstream(s.path / "f") << "x";
  const auto problem = dump_directory_problem((s.path / "f" / "sub" / "dir").string());
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem, "cannot make this directory: " + (s.path / "f").string() + " is a file, not a directory");
}

TEST(DumpDirectory, ErrnosReadAsPlainWords) {
  EXPECT_EQ(tessera::plain_file_error(EACCES), "no permission");
  EXPECT_EQ(tessera::plain_file_error(EROFS), "the file system is read-only");
  EXPECT_EQ(tessera::plain_file_error(ENOSPC), "the disk is full");
}
