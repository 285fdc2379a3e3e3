// Tests for runner/torch_save_reader: the APPEND/SETITEM rewrite on hand-made pickles, and
// reading the torch.save fixtures written by tests/fixtures/make_input_fixtures.py.

#include "runner/formats/torch_save_reader.h"
#include "runner/formats/torch_save_writer.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tsrepro/error.h"

#ifndef TSREPRO_SOURCE_DIR
#error "TSREPRO_SOURCE_DIR must name the repository root (a string literal)"
#endif

namespace tsrepro {
namespace {

// Builds a std::string from a literal that may contain NUL bytes.
template <size_t N>
std::string bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

std::string fixture(const std::string& name) { return std::string(TSREPRO_SOURCE_DIR) + "/tests/fixtures/" + name; }

// Returns the UserError message read_torch_save throws for `path`, or fails the test.
std::string user_error_for(const std::string& path) {
  try {
    read_torch_save(path);
  } catch (const UserError& error) {
    return error.what();
  }
  ADD_FAILURE() << "read_torch_save(" << path << ") did not throw UserError";
  return "";
}

std::string runtime_error_for(const std::string& pickle) {
  try {
    rewrite_for_libtorch(pickle);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  ADD_FAILURE() << "rewrite_for_libtorch did not throw";
  return "";
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

void expect_tensor(const c10::IValue& value, const at::Tensor& expected) {
  ASSERT_TRUE(value.isTensor()) << value.tagKind();
  const at::Tensor& actual = value.toTensor();
  EXPECT_EQ(actual.scalar_type(), expected.scalar_type());
  EXPECT_EQ(actual.sizes(), expected.sizes());
  EXPECT_EQ(actual.strides(), expected.strides());
  EXPECT_EQ(actual.storage_offset(), expected.storage_offset());
  EXPECT_TRUE(at::equal(actual, expected)) << actual << "\nexpected\n" << expected;
}

at::Tensor float_range(int64_t n) { return at::arange(n, at::kFloat); }

// The five values make_input_fixtures.py saves as inputs_tuple.pt / inputs_list.pt.
void expect_mixed_values(const std::vector<c10::IValue>& values) {
  ASSERT_EQ(values.size(), 5u);
  expect_tensor(values[0], float_range(6).reshape({2, 3}));
  expect_tensor(values[1], at::tensor({3, 1, 4, 1}, at::kLong));
  ASSERT_TRUE(values[2].isInt());
  EXPECT_EQ(values[2].toInt(), 7);
  ASSERT_TRUE(values[3].isDouble());
  EXPECT_EQ(values[3].toDouble(), 0.5);
  ASSERT_TRUE(values[4].isBool());
  EXPECT_TRUE(values[4].toBool());
}

std::vector<c10::IValue> list_items(const c10::IValue& value) {
  EXPECT_TRUE(value.isList()) << value.tagKind();
  return value.isList() ? value.toListRef().vec() : std::vector<c10::IValue>{};
}

std::vector<c10::IValue> tuple_items(const c10::IValue& value) {
  EXPECT_TRUE(value.isTuple()) << value.tagKind();
  return value.isTuple() ? value.toTupleRef().elements().vec() : std::vector<c10::IValue>{};
}

// --- rewrite_for_libtorch --------------------------------------------------------------------

TEST(PickleRewrite, TurnsAppendIntoMarkAndAppends) {
  // [7]: PROTO 2, EMPTY_LIST, BINPUT 0, BININT1 7, APPEND, STOP
  const std::string pickle = bytes(
      "\x80\x02]q\x00K\x07"
      "a.");
  EXPECT_EQ(rewrite_for_libtorch(pickle), bytes("\x80\x02]q\x00(K\x07"
                                                "e."));
}

TEST(PickleRewrite, TurnsSetItemIntoMarkAndSetItems) {
  // {"x": 1}: EMPTY_DICT, BINPUT 0, BINUNICODE "x", BINPUT 1, BININT1 1, SETITEM
  const std::string pickle = bytes("\x80\x02}q\x00X\x01\x00\x00\x00xq\x01K\x01s.");
  EXPECT_EQ(rewrite_for_libtorch(pickle), bytes("\x80\x02}q\x00(X\x01\x00\x00\x00xq\x01K\x01u."));
}

TEST(PickleRewrite, PutsMarkBeforeTheWholeReducedItem) {
  // [builtins.int(5)]: the item starts at its GLOBAL, not at the REDUCE or its argument.
  const std::string pickle = bytes(
      "\x80\x02]q\x00"
      "cbuiltins\nint\nq\x01K\x05\x85R"
      "a.");
  EXPECT_EQ(rewrite_for_libtorch(pickle), bytes("\x80\x02]q\x00("
                                                "cbuiltins\nint\nq\x01K\x05\x85R"
                                                "e."));
}

TEST(PickleRewrite, HandlesNestedSingleElementLists) {
  // [[1]]: the outer item is the inner list, which itself gets one APPEND.
  const std::string pickle = bytes(
      "\x80\x02]q\x00]q\x01K\x01"
      "aa.");
  EXPECT_EQ(rewrite_for_libtorch(pickle), bytes("\x80\x02]q\x00(]q\x01(K\x01"
                                                "ee."));
}

TEST(PickleRewrite, MarkedTupleItemStartsAtItsMark) {
  // [(1, 2, 3, 4)]: TUPLE pops to its MARK, so the item starts there.
  const std::string pickle = bytes(
      "\x80\x02](K\x01K\x02K\x03K\x04t"
      "a.");
  EXPECT_EQ(rewrite_for_libtorch(pickle), bytes("\x80\x02]((K\x01K\x02K\x03K\x04t"
                                                "e."));
}

TEST(PickleRewrite, MemoFetchedItemGetsItsOwnMark) {
  // ["s", "s"] written as two single APPENDs, the second item fetched from the memo.
  const std::string pickle = bytes(
      "\x80\x02]X\x01\x00\x00\x00sq\x00"
      "ah\x00"
      "a.");
  EXPECT_EQ(rewrite_for_libtorch(pickle), bytes("\x80\x02](X\x01\x00\x00\x00sq\x00"
                                                "e(h\x00"
                                                "e."));
}

TEST(PickleRewrite, LeavesStreamsWithoutSingleInsertsUnchanged) {
  const std::vector<std::string> pickles = {
      bytes("\x80\x02](K\x01K\x02"
            "e."),                            // [1, 2]
      bytes("\x80\x02K\x01K\x02\x86q\x00."),  // (1, 2)
      bytes("\x80\x02}(X\x01\x00\x00\x00"
            "aK\x01u."),                                           // {"a": 1} batched
      bytes("\x80\x02G?\xe0\x00\x00\x00\x00\x00\x00."),            // 0.5
      bytes("\x80\x02\x8a\x08\x01\x00\x00\x00\x00\x00\x00\x00."),  // LONG1
  };
  for (const std::string& pickle : pickles) {
    EXPECT_EQ(rewrite_for_libtorch(pickle), pickle);
  }
}

TEST(PickleRewrite, ReportsUnknownOpcodeWithByteAndOffset) {
  const std::string message = runtime_error_for(bytes("\x80\x02N\xff."));
  EXPECT_NE(message.find("0xff"), std::string::npos) << message;
  EXPECT_NE(message.find("byte 3"), std::string::npos) << message;
}

TEST(PickleRewrite, ReportsTruncatedArgument) {
  const std::string message =
      runtime_error_for(bytes("\x80\x02X\x05\x00\x00\x00"
                              "ab"));
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST(PickleRewrite, ReportsMissingStop) {
  const std::string message = runtime_error_for(bytes("\x80\x02]"));
  EXPECT_NE(message.find("STOP"), std::string::npos) << message;
}

TEST(PickleRewrite, ReportsAppendWithoutContainer) {
  // The only entry is the would-be item; there is nothing to append it to.
  const std::string message =
      runtime_error_for(bytes("\x80\x02K\x01"
                              "a."));
  EXPECT_NE(message.find("no container"), std::string::npos) << message;
  EXPECT_NE(message.find("0x61"), std::string::npos) << message;
}

TEST(PickleRewrite, ReportsAppendWithoutItem) {
  const std::string message =
      runtime_error_for(bytes("\x80\x02"
                              "a."));
  EXPECT_NE(message.find("underflow"), std::string::npos) << message;
}

// --- read_torch_save -------------------------------------------------------------------------

TEST(ReadTorchSave, ReadsMixedTuple) { expect_mixed_values(tuple_items(read_torch_save(fixture("inputs_tuple.pt")))); }

TEST(ReadTorchSave, ReadsMixedList) { expect_mixed_values(list_items(read_torch_save(fixture("inputs_list.pt")))); }

TEST(ReadTorchSave, ReadsSingleElementList) {
  const auto items = list_items(read_torch_save(fixture("inputs_single_list.pt")));
  ASSERT_EQ(items.size(), 1u);
  expect_tensor(items[0], float_range(4));
}

TEST(ReadTorchSave, ReadsSingleElementTuple) {
  const auto items = tuple_items(read_torch_save(fixture("inputs_single_tuple.pt")));
  ASSERT_EQ(items.size(), 1u);
  expect_tensor(items[0], float_range(4));
}

TEST(ReadTorchSave, ReadsSingleEntryDict) {
  const c10::IValue value = read_torch_save(fixture("inputs_single_dict.pt"));
  ASSERT_TRUE(value.isGenericDict()) << value.tagKind();
  const auto dict = value.toGenericDict();
  ASSERT_EQ(dict.size(), 1u);
  ASSERT_TRUE(dict.contains(c10::IValue("x")));
  expect_tensor(dict.at(c10::IValue("x")), float_range(4));
}

TEST(ReadTorchSave, KeepsStridesAndStorageOffsetOfViews) {
  const auto items = tuple_items(read_torch_save(fixture("inputs_strided.pt")));
  ASSERT_EQ(items.size(), 2u);

  const at::Tensor transposed = float_range(12).reshape({3, 4}).t();
  ASSERT_EQ(transposed.strides(), (std::vector<int64_t>{1, 4}));
  expect_tensor(items[0], transposed);

  const at::Tensor slice = float_range(10).slice(0, 2, 7);
  ASSERT_EQ(slice.storage_offset(), 2);
  expect_tensor(items[1], slice);
  // torch.save keeps the whole storage the slice views, not just the five visible floats.
  EXPECT_EQ(items[1].toTensor().storage().nbytes(), 10 * sizeof(float));
}

TEST(ReadTorchSave, ReadsNestedContainers) {
  const auto outer = list_items(read_torch_save(fixture("inputs_nested_list.pt")));
  ASSERT_EQ(outer.size(), 2u);

  const auto inner_list = list_items(outer[0]);
  ASSERT_EQ(inner_list.size(), 1u);
  expect_tensor(inner_list[0], at::ones({2}, at::kFloat));

  const auto inner_tuple = tuple_items(outer[1]);
  ASSERT_EQ(inner_tuple.size(), 2u);
  ASSERT_TRUE(inner_tuple[0].isInt());
  EXPECT_EQ(inner_tuple[0].toInt(), 1);
  ASSERT_TRUE(inner_tuple[1].isDouble());
  EXPECT_EQ(inner_tuple[1].toDouble(), 2.5);
}

TEST(PickleRewrite, WidensShortAndLongIntsToEightBytes) {
  // 2**32 as Python pickles it: LONG1 with 5 bytes; -1 as LONG1 of 1 byte; 5 as LONG4 of 2 bytes.
  EXPECT_EQ(rewrite_for_libtorch(bytes("\x80\x02\x8a\x05\x00\x00\x00\x00\x01.")),
            bytes("\x80\x02\x8a\x08\x00\x00\x00\x00\x01\x00\x00\x00."));
  EXPECT_EQ(rewrite_for_libtorch(bytes("\x80\x02\x8a\x01\xff.")),
            bytes("\x80\x02\x8a\x08\xff\xff\xff\xff\xff\xff\xff\xff."));
  EXPECT_EQ(rewrite_for_libtorch(bytes("\x80\x02\x8b\x02\x00\x00\x00\x05\x00.")),
            bytes("\x80\x02\x8a\x08\x05\x00\x00\x00\x00\x00\x00\x00."));
  // 2**63 needs 9 bytes: no TorchScript int holds it.
  EXPECT_NE(runtime_error_for(bytes("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00.")).find("wider than 64 bits"),
            std::string::npos);
  // A single-element list of a short long: the MARK goes before the widened op.
  EXPECT_EQ(rewrite_for_libtorch(bytes("\x80\x02]\x8a\x05\x00\x00\x00\x00\x01" "a.")),
            bytes("\x80\x02](\x8a\x08\x00\x00\x00\x00\x01\x00\x00\x00" "e."));
}

// The ints of an unpickled list (libtorch's unpickler makes a generic list of a Python list).
std::vector<int64_t> ints_of(const c10::IValue& list) {
  std::vector<int64_t> ints;
  for (const c10::IValue& item : list.toListRef()) ints.push_back(item.toInt());
  return ints;
}

// Whatever /usr/bin/python3's torch.save writes for the values a model takes reads back equal.
TEST(ReadTorchSave, ReadsEveryValuePythonsPicklerWrites) {
  SKIP_WITHOUT_PYTHON_TORCH();
  tsrepro_test::TempDir dir;
  const std::string path = dir / "values.pt";
  const tsrepro_test::ShellResult wrote = tsrepro_test::run_shell(
      tsrepro_test::kPython + " -c 'import sys, torch; torch.save((" +
      "[0, 1, -1, 255, 256, -256, 2**31 - 1, -2**31, 2**31, -2**31 - 1, 2**32, -2**32, 2**40 + 3, 2**63 - 1, -2**63]," +
      " [0.5, float(\"inf\"), float(\"-inf\"), -0.0, 5e-324, 1e308], [True, False], None, \"é\\n\"," +
      " {\"a\": [1, 2**33], \"b\": {\"c\": (2**35,)}}, (2**32,), [[2**34]], []), sys.argv[1])' " +
      tsrepro_test::shell_quoted(path));
  ASSERT_EQ(wrote.exit_code, 0) << wrote.output;
  const c10::IValue value = read_torch_save(path);
  const std::vector<c10::IValue> items = value.toTupleRef().elements().vec();
  ASSERT_EQ(items.size(), 9U);
  const std::vector<int64_t> ints = {0, 1, -1, 255, 256, -256, (int64_t{1} << 31) - 1, -(int64_t{1} << 31),
                                     int64_t{1} << 31, -(int64_t{1} << 31) - 1, int64_t{1} << 32,
                                     -(int64_t{1} << 32), (int64_t{1} << 40) + 3,
                                     std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  EXPECT_EQ(ints_of(items[0]), ints);
  const std::vector<c10::IValue> floats = items[1].toListRef().vec();
  ASSERT_EQ(floats.size(), 6U);
  EXPECT_EQ(floats[1].toDouble(), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::signbit(floats[3].toDouble()));
  EXPECT_EQ(floats[4].toDouble(), 5e-324);
  EXPECT_EQ(items[2].toListRef()[0].toBool(), true);
  EXPECT_TRUE(items[3].isNone());
  EXPECT_EQ(items[4].toStringRef(), "é\n");
  const c10::impl::GenericDict dict = items[5].toGenericDict();
  EXPECT_EQ(ints_of(dict.at("a")), (std::vector<int64_t>{1, int64_t{1} << 33}));
  EXPECT_EQ(dict.at("b").toGenericDict().at("c").toTupleRef().elements()[0].toInt(), int64_t{1} << 35);
  EXPECT_EQ(items[6].toTupleRef().elements()[0].toInt(), int64_t{1} << 32);
  EXPECT_EQ(ints_of(items[7].toListRef()[0]), std::vector<int64_t>{int64_t{1} << 34});
  EXPECT_TRUE(items[8].toListRef().empty());
}

TEST(ReadTorchSave, RefusesAnIntWiderThan64BitsNamingTheFile) {
  SKIP_WITHOUT_PYTHON_TORCH();
  tsrepro_test::TempDir dir;
  const std::string path = dir / "wide.pt";
  const tsrepro_test::ShellResult wrote = tsrepro_test::run_shell(
      tsrepro_test::kPython + " -c 'import sys, torch; torch.save((2**64,), sys.argv[1])' " + tsrepro_test::shell_quoted(path));
  ASSERT_EQ(wrote.exit_code, 0) << wrote.output;
  const std::string message = user_error_for(path);
  EXPECT_TRUE(starts_with(message, path + ": ")) << message;
  EXPECT_NE(message.find("wider than 64 bits"), std::string::npos) << message;
}

TEST(ReadTorchSave, RejectsLegacyFormatWithAdvice) {
  const std::string path = fixture("inputs_legacy.pt");
  EXPECT_EQ(user_error_for(path), path +
                                      ": not a torch.save zip archive (legacy or foreign format); re-save it with a "
                                      "current torch.save");
}

TEST(ReadTorchSave, RejectsFileThatIsNotAZip) {
  const std::string path = fixture("not_torch.pt");
  EXPECT_TRUE(starts_with(user_error_for(path), path + ": not a torch.save zip archive"));
}

TEST(ReadTorchSave, RejectsZipWithoutTorchSaveRecords) {
  const std::string path = fixture("zip_not_torch.pt");
  const std::string message = user_error_for(path);
  EXPECT_TRUE(starts_with(message, path + ": cannot read torch.save data: ")) << message;
  // One line, no C++ backtrace.
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(WriteTorchSave, WritesWhatPickleSaveReturnsAndReadsBack) {
  const std::string path = ::testing::TempDir() + "/write_torch_save.pt";
  const c10::IValue value = c10::ivalue::Tuple::create(
      {at::arange(12, at::kFloat).reshape({3, 4}), int64_t{7}, at::ones({2}, at::kBool), c10::IValue()});
  write_torch_save(path, value);
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, torch::jit::pickle_save(value));  // byte for byte, streamed instead of in memory
  const c10::IValue back = read_torch_save(path);
  ASSERT_TRUE(back.isTuple());
  EXPECT_TRUE(at::equal(back.toTupleRef().elements()[0].toTensor(), value.toTupleRef().elements()[0].toTensor()));
  EXPECT_EQ(back.toTupleRef().elements()[1].toInt(), 7);
}

TEST(ReadTorchSave, TensorsLieInTheFileAndAWriteStaysInTheProcess) {
  const std::string path = ::testing::TempDir() + "/mapped.pt";
  write_torch_save(path, c10::ivalue::Tuple::create({at::arange(4096, at::kFloat)}));
  at::Tensor first = read_torch_save(path).toTupleRef().elements()[0].toTensor();
  at::Tensor second = read_torch_save(path).toTupleRef().elements()[0].toTensor();
  EXPECT_TRUE(at::equal(first, at::arange(4096, at::kFloat)));
  // Copy on write: the file and every other reader keep the values written.
  first.add_(1);
  EXPECT_TRUE(at::equal(second, at::arange(4096, at::kFloat)));
  EXPECT_TRUE(at::equal(read_torch_save(path).toTupleRef().elements()[0].toTensor(), at::arange(4096, at::kFloat)));
  EXPECT_TRUE(at::equal(first, at::arange(4096, at::kFloat) + 1));
}

TEST(ReadTorchSave, RejectsMissingFile) {
  const std::string path = fixture("does_not_exist.pt");
  EXPECT_EQ(user_error_for(path), path + ": no such file");
}

}  // namespace
}  // namespace tsrepro
