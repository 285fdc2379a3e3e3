// runner/case/extension_libraries: the Python package a library of custom operators is part of,
// which the PyTorch 2 compile server and repro.py import beside loading the library.

#include "runner/case/extension_libraries.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "tests/support/files.h"

namespace tsrepro {
namespace {

TEST(ExtensionLibraries, APackagesLibraryNamesThePackageFromItsTopFolder) {
  tsrepro_test::TempDir dir;
  std::filesystem::create_directories(dir / "site/vision/ops");
  tsrepro_test::write_text(dir / "site/vision/__init__.py", "");
  tsrepro_test::write_text(dir / "site/vision/ops/__init__.py", "");
  tsrepro_test::write_text(dir / "site/vision/ops/_C.so", "");
  tsrepro_test::write_text(dir / "site/vision/_C.so", "");
  tsrepro_test::write_text(dir / "site/_plain.so", "");
  EXPECT_EQ(python_package_of(dir / "site/vision/ops/_C.so"), "vision.ops");
  EXPECT_EQ(python_package_of(dir / "site/vision/_C.so"), "vision");
  EXPECT_EQ(python_package_of(dir / "site/_plain.so"), "");  // a project's own library, no package
  EXPECT_EQ(python_package_of("/nonexistent/folder/lib.so"), "");
}

}  // namespace
}  // namespace tsrepro
