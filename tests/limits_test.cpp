// The limits are set in one place (tsrepro/limits.h) and stated to users in docs/FORMATS.md:
// this keeps the two saying the same numbers.

#include <gtest/gtest.h>

#include <string>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tsrepro/limits.h"

namespace tsrepro_test {
namespace {

TEST(Limits, DocsStateTheLimitsTheCodeEnforces) {
  const std::string docs = read_text(source_path("docs/FORMATS.md"));
  auto row = [&](const std::string& name, size_t value, const std::string& unit = "") {
    const std::string expected = "| " + name + " | " + std::to_string(value) + unit + " |";
    EXPECT_NE(docs.find(expected), std::string::npos) << "docs/FORMATS.md should have the row " << expected;
  };
  row("nesting depth", tsrepro::limits::kMaxNestingDepth);
  row("identifier length", tsrepro::limits::kMaxIdentifierBytes, " bytes");
  row("nodes per graph", tsrepro::limits::kMaxGraphNodes);
  row("constants per graph", tsrepro::limits::kMaxGraphConstants);
  row("entries in case.json", tsrepro::limits::kMaxCaseEntries);
}

}  // namespace
}  // namespace tsrepro_test
