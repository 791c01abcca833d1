// Helpers shared by the vm/builtins tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "vm/core/error.h"

// Expects `stmt` to throw RuntimeError with exactly `msg`.
#define EXPECT_RUNTIME_ERROR(stmt, msg)                                          \
  do {                                                                           \
    try {                                                                        \
      (void)(stmt);                                                              \
      ADD_FAILURE() << #stmt << " did not throw; expected: " << (msg);           \
    } catch (const ::tessera::RuntimeError& e) {                                 \
      EXPECT_EQ(std::string(e.what()), std::string(msg)) << #stmt;               \
    }                                                                            \
  } while (0)
