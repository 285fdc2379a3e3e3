// The graph as an eager PyTorch module: backends/eager_module.h.

#include "backends/eager_module.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/ir/ir.h>

#include "backends/case_module.h"
#include "runner/formats/python_literal.h"
#include "runner/graph/strict_fusion.h"

namespace tsrepro {
namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// Names an attribute cannot have: Python's keywords and what torch.nn.Module already defines
// (register_buffer("eval", ...) raises). Names starting with "_" are left out altogether.
const std::set<std::string> kTakenAttributeNames = {"False",
                                                    "None",
                                                    "True",
                                                    "and",
                                                    "as",
                                                    "assert",
                                                    "async",
                                                    "await",
                                                    "break",
                                                    "class",
                                                    "continue",
                                                    "def",
                                                    "del",
                                                    "elif",
                                                    "else",
                                                    "except",
                                                    "finally",
                                                    "for",
                                                    "from",
                                                    "global",
                                                    "if",
                                                    "import",
                                                    "in",
                                                    "is",
                                                    "lambda",
                                                    "nonlocal",
                                                    "not",
                                                    "or",
                                                    "pass",
                                                    "raise",
                                                    "return",
                                                    "try",
                                                    "while",
                                                    "with",
                                                    "yield",
                                                    "self",
                                                    "torch",
                                                    "T_destination",
                                                    "add_module",
                                                    "apply",
                                                    "bfloat16",
                                                    "buffers",
                                                    "call_super_init",
                                                    "children",
                                                    "compile",
                                                    "cpu",
                                                    "cuda",
                                                    "double",
                                                    "dump_patches",
                                                    "eval",
                                                    "extra_repr",
                                                    "float",
                                                    "forward",
                                                    "get_buffer",
                                                    "get_extra_state",
                                                    "get_parameter",
                                                    "get_submodule",
                                                    "half",
                                                    "ipu",
                                                    "load_state_dict",
                                                    "modules",
                                                    "mtia",
                                                    "named_buffers",
                                                    "named_children",
                                                    "named_modules",
                                                    "named_parameters",
                                                    "parameters",
                                                    "register_backward_hook",
                                                    "register_buffer",
                                                    "register_forward_hook",
                                                    "register_forward_pre_hook",
                                                    "register_full_backward_hook",
                                                    "register_full_backward_pre_hook",
                                                    "register_module",
                                                    "register_parameter",
                                                    "requires_grad_",
                                                    "set_extra_state",
                                                    "set_submodule",
                                                    "share_memory",
                                                    "state_dict",
                                                    "to",
                                                    "to_empty",
                                                    "train",
                                                    "training",
                                                    "type",
                                                    "xpu",
                                                    "zero_grad"};

// Names a local variable of forward cannot have: Python's keywords, its builtins (a local `all`
// would hide all() from the line that defines it) and the modules the printed code uses.
const std::set<std::string> kTakenLocalNames = {"ArithmeticError",
                                                "AssertionError",
                                                "AttributeError",
                                                "BaseException",
                                                "BaseExceptionGroup",
                                                "BlockingIOError",
                                                "BrokenPipeError",
                                                "BufferError",
                                                "BytesWarning",
                                                "ChildProcessError",
                                                "ConnectionAbortedError",
                                                "ConnectionError",
                                                "ConnectionRefusedError",
                                                "ConnectionResetError",
                                                "DeprecationWarning",
                                                "EOFError",
                                                "Ellipsis",
                                                "EncodingWarning",
                                                "EnvironmentError",
                                                "Exception",
                                                "ExceptionGroup",
                                                "False",
                                                "FileExistsError",
                                                "FileNotFoundError",
                                                "FloatingPointError",
                                                "FutureWarning",
                                                "GeneratorExit",
                                                "IOError",
                                                "ImportError",
                                                "ImportWarning",
                                                "IndentationError",
                                                "IndexError",
                                                "InterruptedError",
                                                "IsADirectoryError",
                                                "KeyError",
                                                "KeyboardInterrupt",
                                                "LookupError",
                                                "MemoryError",
                                                "ModuleNotFoundError",
                                                "NameError",
                                                "None",
                                                "NotADirectoryError",
                                                "NotImplemented",
                                                "NotImplementedError",
                                                "OSError",
                                                "OverflowError",
                                                "PendingDeprecationWarning",
                                                "PermissionError",
                                                "ProcessLookupError",
                                                "RecursionError",
                                                "ReferenceError",
                                                "ResourceWarning",
                                                "RuntimeError",
                                                "RuntimeWarning",
                                                "StopAsyncIteration",
                                                "StopIteration",
                                                "SyntaxError",
                                                "SyntaxWarning",
                                                "SystemError",
                                                "SystemExit",
                                                "TabError",
                                                "TimeoutError",
                                                "True",
                                                "TypeError",
                                                "UnboundLocalError",
                                                "UnicodeDecodeError",
                                                "UnicodeEncodeError",
                                                "UnicodeError",
                                                "UnicodeTranslateError",
                                                "UnicodeWarning",
                                                "UserWarning",
                                                "ValueError",
                                                "Warning",
                                                "ZeroDivisionError",
                                                "abs",
                                                "aiter",
                                                "all",
                                                "and",
                                                "anext",
                                                "any",
                                                "as",
                                                "ascii",
                                                "assert",
                                                "async",
                                                "await",
                                                "bin",
                                                "bool",
                                                "break",
                                                "breakpoint",
                                                "bytearray",
                                                "bytes",
                                                "callable",
                                                "chr",
                                                "class",
                                                "classmethod",
                                                "compile",
                                                "complex",
                                                "continue",
                                                "copyright",
                                                "credits",
                                                "def",
                                                "del",
                                                "delattr",
                                                "dict",
                                                "dir",
                                                "divmod",
                                                "elif",
                                                "else",
                                                "enumerate",
                                                "eval",
                                                "except",
                                                "exec",
                                                "exit",
                                                "filter",
                                                "finally",
                                                "float",
                                                "for",
                                                "format",
                                                "from",
                                                "frozenset",
                                                "getattr",
                                                "global",
                                                "globals",
                                                "hasattr",
                                                "hash",
                                                "help",
                                                "hex",
                                                "id",
                                                "if",
                                                "import",
                                                "in",
                                                "input",
                                                "int",
                                                "is",
                                                "isinstance",
                                                "issubclass",
                                                "iter",
                                                "lambda",
                                                "len",
                                                "license",
                                                "list",
                                                "locals",
                                                "map",
                                                "math",
                                                "max",
                                                "memoryview",
                                                "min",
                                                "next",
                                                "nonlocal",
                                                "not",
                                                "object",
                                                "oct",
                                                "open",
                                                "or",
                                                "ord",
                                                "pass",
                                                "pow",
                                                "print",
                                                "property",
                                                "quit",
                                                "raise",
                                                "range",
                                                "repr",
                                                "return",
                                                "reversed",
                                                "round",
                                                "self",
                                                "set",
                                                "setattr",
                                                "slice",
                                                "sorted",
                                                "staticmethod",
                                                "str",
                                                "sum",
                                                "super",
                                                "torch",
                                                "try",
                                                "tuple",
                                                "type",
                                                "vars",
                                                "warnings",
                                                "while",
                                                "with",
                                                "yield",
                                                "zip"};

std::string identifier_from(std::string name) {
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
  return name;
}

// ---- The table of spellings (backends/eager_spellings.def) ----------------------------------------

enum class EagerForm { Value, Statement, InPlace };

struct EagerSpelling {
  const char* op;
  const char* overloads;
  EagerForm form;
  const char* text;
};

const EagerSpelling kEagerSpellings[] = {
#define EAGER_SPELLING(op, overloads, form, text) {op, overloads, EagerForm::form, text},
#include "backends/eager_spellings.def"
#undef EAGER_SPELLING
};

// Whether `overload` is among the line's overloads: named there (exact), or covered by "*".
bool lists_overload(const EagerSpelling& line, const std::string& overload, bool exact) {
  std::istringstream words(line.overloads);
  std::string word;
  while (words >> word) {
    if (word == "*") {
      if (!exact) return true;
    } else if (exact && (word == "_" ? std::string() : word) == overload) {
      return true;
    }
  }
  return false;
}

const EagerSpelling* spelling_of(const std::string& op, const std::string& overload, bool exact) {
  for (const EagerSpelling& line : kEagerSpellings)
    if (op == line.op && lists_overload(line, overload, exact)) return &line;
  return nullptr;
}

bool has_dispatcher_kernel(const std::string& op, const std::string& overload) {
  return c10::Dispatcher::singleton().findSchema(c10::OperatorName(op, overload)).has_value();
}

// ---- Literals -------------------------------------------------------------------------------------

struct NoEagerForm : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string dtype_literal(int64_t code) {
  static const std::map<c10::ScalarType, std::string> kNames = {{c10::kFloat, "float32"},
                                                                {c10::kDouble, "float64"},
                                                                {c10::kHalf, "float16"},
                                                                {c10::kBFloat16, "bfloat16"},
                                                                {c10::kLong, "int64"},
                                                                {c10::kInt, "int32"},
                                                                {c10::kShort, "int16"},
                                                                {c10::kChar, "int8"},
                                                                {c10::kByte, "uint8"},
                                                                {c10::kBool, "bool"},
                                                                {c10::kComplexFloat, "complex64"},
                                                                {c10::kComplexDouble, "complex128"}};
  const auto found = kNames.find(static_cast<c10::ScalarType>(code));
  return found == kNames.end() ? std::to_string(code) : "torch." + found->second;
}

std::string layout_literal(int64_t code) {
  static const std::map<int64_t, std::string> kNames = {{0, "strided"}, {1, "sparse_coo"}};
  const auto found = kNames.find(code);
  return found == kNames.end() ? std::to_string(code) : "torch." + found->second;
}

std::string memory_format_literal(int64_t code) {
  static const std::map<int64_t, std::string> kNames = {
      {0, "contiguous_format"}, {1, "preserve_format"}, {2, "channels_last"}, {3, "channels_last_3d"}};
  const auto found = kNames.find(code);
  return found == kNames.end() ? std::to_string(code) : "torch." + found->second;
}

// ---- The printer ----------------------------------------------------------------------------------

class EagerPrinter {
 public:
  EagerPrinter(const Graph& graph, const std::vector<bool>& lifted) : graph_(graph), lifted_(lifted) {}

  EagerModule print() {
    EagerModule m;
    std::string parameters;
    for (size_t i = 0; i < graph_.inputs().size(); ++i) {
      const Value* input = graph_.inputs()[i];
      if (i < lifted_.size() && lifted_[i]) {
        if (!input->hasUses()) continue;
        EagerAttribute attribute{module_attribute_name(input, attribute_names_), i, {}, is_training_flag(input)};
        text_[input] = "self." + attribute.name;
        attributes_.push_back(attribute);
        continue;
      }
      m.forward_inputs.push_back(i);
      parameters += ", " + (text_[input] = local_name(input, "argument"));
    }
    out_ << "    def forward(self" << parameters << "):\n";
    block_body(*graph_.block(), 2);
    std::vector<std::string> outputs;
    for (const Value* output : graph_.outputs()) outputs.push_back(use(output));
    m.packed = outputs.size() != 1;
    line(2) << "return " << (m.packed ? tuple_text(outputs) : outputs[0]) << "\n";
    m.forward = out_.str() + methods_.str();
    m.attributes = std::move(attributes_);
    m.imports.assign(imports_.begin(), imports_.end());
    return m;
  }

 private:
  std::ostream& line(int indent) { return out_ << std::string(4 * static_cast<size_t>(indent), ' '); }

  std::string local_name(const Value* value, const std::string& hint) {
    std::string name = value->hasDebugName() ? identifier_from(value->debugNameBase()) : "";
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = identifier_from(hint);
    if (kTakenLocalNames.count(name) || name.rfind("self", 0) == 0) name = "v_" + name;
    std::string unique = name;
    for (int n = 1; used_locals_.count(unique); ++n) unique = name + "_" + std::to_string(n);
    used_locals_.insert(unique);
    return unique;
  }

  std::string define(const Value* value, const Node& node) {
    return text_[value] = local_name(value, node.kind().toUnqualString());
  }

  // The Python text of a value a node uses: a name, a literal (a constant) or self.<attribute>.
  std::string use(const Value* value, const c10::Argument* argument = nullptr) {
    if (value->node()->kind() == c10::prim::Constant) return constant(*value, argument);
    const auto found = text_.find(value);
    if (found == text_.end())
      throw NoEagerForm("a value used before the printer defined it (" + value->debugName() + ")");
    return found->second;
  }

  std::string constant(const Value& value, const c10::Argument* argument) {
    const c10::optional<c10::IValue> ivalue = torch::jit::toIValue(&value);
    if (!ivalue) throw NoEagerForm("a constant of type " + value.type()->str() + " with no value");
    if (ivalue->isTensor()) {  // an attribute of the module: source holds tensors only there
      const auto found = text_.find(&value);
      if (found != text_.end()) return found->second;
      std::string name = "constant";
      for (int n = 1; attribute_names_.count(name); ++n) name = "constant_" + std::to_string(n);
      attribute_names_.insert(name);
      attributes_.push_back({name, std::nullopt, *ivalue, false});
      return text_[&value] = "self." + name;
    }
    const c10::TypePtr kind = argument ? argument->real_type() : value.type();
    return literal(*ivalue, kind);
  }

  std::string literal(const c10::IValue& v, const c10::TypePtr& type) {
    const c10::TypePtr declared = type && type->kind() == c10::TypeKind::OptionalType
                                      ? type->expectRef<c10::OptionalType>().getElementType()
                                      : type;
    const c10::TypeKind kind = declared ? declared->kind() : c10::TypeKind::AnyType;
    if (v.isNone()) return "None";
    if (v.isBool()) return python_bool_literal(v.toBool());
    if (v.isInt()) {
      if (kind == c10::TypeKind::ScalarTypeType) return dtype_literal(v.toInt());
      if (kind == c10::TypeKind::LayoutType) return layout_literal(v.toInt());
      if (kind == c10::TypeKind::MemoryFormatType) return memory_format_literal(v.toInt());
      return std::to_string(v.toInt());
    }
    if (v.isDouble()) {
      std::string text = python_float_literal(v.toDouble());
      if (text.find("math.") != std::string::npos) imports_.insert("math");
      return text;
    }
    if (v.isString()) return python_string_literal(v.toStringRef());
    if (v.isDevice()) return "torch.device(" + python_string_literal(v.toDevice().str()) + ")";
    if (v.isList()) {
      const c10::TypePtr element = kind == c10::TypeKind::ListType ? declared->containedType(0) : nullptr;
      std::string text;
      for (const c10::IValue& item : v.toListRef()) text += (text.empty() ? "" : ", ") + literal(item, element);
      return "[" + text + "]";
    }
    if (v.isTuple()) {
      std::vector<std::string> items;
      for (const c10::IValue& item : v.toTupleRef().elements()) items.push_back(literal(item, nullptr));
      return tuple_text(items);
    }
    throw NoEagerForm("a constant of type " + v.tagKind());
  }

  static std::string tuple_text(const std::vector<std::string>& items) {
    if (items.size() == 1) return "(" + items[0] + ",)";
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
    return "(" + text + ")";
  }

  static std::string joined_items(const std::vector<std::string>& items, size_t from = 0) {
    std::string text;
    for (size_t i = from; i < items.size(); ++i) text += (i == from ? "" : ", ") + items[i];
    return text;
  }

  // The inputs of `node`, each as its text; literals typed by the node's schema (dtype as torch.float32).
  std::vector<std::string> arguments(const Node& node) {
    const c10::FunctionSchema* schema = node.maybeSchema();
    // TorchScript's dtype is an int (prim::dtype), eager PyTorch's a torch.dtype: an int constant
    // compared with one is written as the dtype it stands for.
    const bool compares_dtype = (node.kind() == c10::aten::eq || node.kind() == c10::aten::ne) &&
                                std::any_of(node.inputs().begin(), node.inputs().end(),
                                            [](const Value* v) { return v->node()->kind() == c10::prim::dtype; });
    std::vector<std::string> texts;
    for (size_t i = 0; i < node.inputs().size(); ++i) {
      const Value* input = node.inputs()[i];
      const c10::Argument* argument =
          schema && i < schema->arguments().size() && !schema->is_vararg() ? &schema->arguments()[i] : nullptr;
      const c10::optional<c10::IValue> constant = constant_value(input);
      texts.push_back(compares_dtype && constant && constant->isInt() ? dtype_literal(constant->toInt())
                                                                      : use(input, argument));
    }
    return texts;
  }

  void block_body(const Block& block, int indent) {
    const std::streampos start = out_.tellp();
    for (const Node* node : block.nodes()) statement(*node, indent);
    if (out_.tellp() == start) line(indent) << "pass\n";
  }

  // Assigns `values` (a block's outputs, from `from` on) to the names of `targets`, in one statement.
  void assign(const std::vector<std::string>& targets, const std::vector<std::string>& values, int indent) {
    if (targets.empty()) return;
    line(indent) << joined_items(targets) << " = " << joined_items(values) << "\n";
  }

  void statement(const Node& node, int indent) {
    const c10::Symbol kind = node.kind();
    if (kind == c10::prim::Constant) return;  // written where it is used
    // A torch.jit.strict_fusion block (the one with statement a case keeps, runner/graph/strict_fusion.h)
    // asks TorchScript's fusers for a check; eager PyTorch has none, and its body runs as it is.
    if (kind == c10::prim::Enter || kind == c10::prim::Exit) return;
    if (kind == c10::prim::CreateObject && node.output()->type() == strict_fusion_class()) return;
    if (kind == c10::prim::If) return if_statement(node, indent);
    if (kind == c10::prim::Loop) return loop_statement(node, indent);
    if (kind == c10::prim::ListConstruct)
      return value_statement(node, "[" + joined_items(arguments(node)) + "]", indent);
    if (kind == c10::prim::TupleConstruct) return value_statement(node, tuple_text(arguments(node)), indent);
    if (kind == c10::prim::DictConstruct) {
      const std::vector<std::string> items = arguments(node);
      std::string text;
      for (size_t i = 0; i + 1 < items.size(); i += 2) text += (i ? ", " : "") + items[i] + ": " + items[i + 1];
      return value_statement(node, "{" + text + "}", indent);
    }
    if (kind == c10::prim::ListUnpack || kind == c10::prim::TupleUnpack) {
      if (node.outputs().empty()) return;
      std::vector<std::string> names;
      for (const Value* output : node.outputs()) names.push_back(define(output, node));
      line(indent) << joined_items(names) << (names.size() == 1 ? "," : "") << " = " << use(node.input()) << "\n";
      return;
    }
    if (kind == c10::prim::Uninitialized) return value_statement(node, "None", indent);
    if (kind == c10::prim::NumToTensor) return value_statement(node, num_to_tensor(node), indent);
    if (kind == c10::prim::isinstance) return value_statement(node, isinstance_text(node), indent);
    op_statement(node, indent);
  }

  // isinstance(x, (...)) with the Python class of each type the node tests for. TorchScript checks
  // a container's element type too, which Python's isinstance cannot: the route check judges.
  std::string isinstance_text(const Node& node) {
    static const std::map<c10::TypeKind, std::string> kClasses = {
        {c10::TypeKind::TensorType, "torch.Tensor"}, {c10::TypeKind::IntType, "int"},
        {c10::TypeKind::FloatType, "float"},         {c10::TypeKind::BoolType, "bool"},
        {c10::TypeKind::StringType, "str"},          {c10::TypeKind::ListType, "list"},
        {c10::TypeKind::TupleType, "tuple"},         {c10::TypeKind::DictType, "dict"},
        {c10::TypeKind::NoneType, "type(None)"},     {c10::TypeKind::DeviceObjType, "torch.device"},
        {c10::TypeKind::AnyListType, "list"},        {c10::TypeKind::AnyTupleType, "tuple"}};
    std::vector<std::string> classes;
    for (const c10::TypePtr& type : node.tys(c10::attr::types)) {
      // isinstance(x, (list, tuple)) names the containers as type variables of those names.
      if (type->kind() == c10::TypeKind::VarType) {
        const std::string& name = type->expectRef<c10::VarType>().name();
        if (name == "list" || name == "tuple" || name == "dict") {
          classes.push_back(name);
          continue;
        }
      }
      const auto found = kClasses.find(type->kind());
      if (found == kClasses.end())
        throw NoEagerForm("prim::isinstance of " + type->str() + " (" + c10::typeKindToString(type->kind()) + ")");
      classes.push_back(found->second);
    }
    return "isinstance(" + use(node.input()) + ", " + tuple_text(classes) + ")";
  }

  // TorchScript's NumToTensor: a 0-dim tensor of the number's own kind (a float is float64).
  std::string num_to_tensor(const Node& node) {
    const c10::TypeKind from = node.input()->type()->kind();
    const std::string number = use(node.input());
    if (from == c10::TypeKind::IntType) return "torch.tensor(" + number + ", dtype=torch.int64)";
    if (from == c10::TypeKind::FloatType) return "torch.tensor(" + number + ", dtype=torch.float64)";
    if (from == c10::TypeKind::BoolType) return "torch.tensor(" + number + ", dtype=torch.bool)";
    throw NoEagerForm("prim::NumToTensor of a " + node.input()->type()->str());
  }

  void value_statement(const Node& node, const std::string& text, int indent) {
    if (node.outputs().size() != 1)
      throw NoEagerForm(std::string(node.kind().toQualString()) + " with " + std::to_string(node.outputs().size()) +
                        " outputs");
    line(indent) << define(node.output(), node) << " = " << text << "\n";
  }

  void op_statement(const Node& node, int indent) {
    const std::string op = node.kind().toQualString();
    const c10::FunctionSchema* schema = node.maybeSchema();
    const std::string overload = schema ? schema->overload_name() : "";
    // The dispatcher's kernel first: the op's one meaning, whatever Python would call it.
    if (schema && has_dispatcher_kernel(op, overload)) return dispatched(node, *schema, indent);
    if (const EagerSpelling* line_of = spelling_of(op, overload, /*exact=*/true))
      return spelled(node, *line_of, indent);
    if (const EagerSpelling* line_of = spelling_of(op, overload, /*exact=*/false))
      return spelled(node, *line_of, indent);
    throw NoEagerForm("no eager spelling of " + op + (overload.empty() ? "" : "." + overload) +
                      " (backends/eager_spellings.def)");
  }

  // torch.ops.<ns>.<op>.<overload>(...): positional arguments as the schema has them, keyword-only
  // ones by name; trailing arguments that hold their default left out.
  void dispatched(const Node& node, const c10::FunctionSchema& schema, int indent) {
    const std::vector<std::string> texts = arguments(node);
    const auto& declared = schema.arguments();
    std::vector<bool> keep(texts.size(), true);
    for (size_t i = texts.size(); i-- > 0;) {
      const bool is_default = i < declared.size() && declared[i].default_value() &&
                              node.inputs()[i]->node()->kind() == c10::prim::Constant &&
                              torch::jit::toIValue(node.inputs()[i]) == *declared[i].default_value();
      if (!is_default) {
        if (i < declared.size() && declared[i].kwarg_only()) continue;
        break;
      }
      keep[i] = false;
    }
    std::vector<std::string> passed;
    for (size_t i = 0; i < texts.size(); ++i) {
      if (!keep[i]) continue;
      const bool by_name = i < declared.size() && declared[i].kwarg_only();
      passed.push_back(by_name ? declared[i].name() + "=" + texts[i] : texts[i]);
    }
    // A query of a tensor that answers with numbers or bools (x.dim(), x.size(1), x.is_floating_point())
    // is its Tensor method: Dynamo breaks the graph at a torch.ops call that returns no tensor
    // ("torch.* op returned non-Tensor"), and at a break inside a loop it leaves the whole frame to
    // eager, so a detection model was "compiled" with no graph at all. The method binds the same
    // overload: the query's overloads differ by their argument's types.
    if (is_tensor_query(schema) && !passed.empty()) {
      const std::string self = passed.front();
      passed.erase(passed.begin());
      const std::string query = self + "." + node.kind().toUnqualString() + "(" + joined_items(passed) + ")";
      const bool is_list = schema.returns()[0].type()->kind() == c10::TypeKind::ListType;
      outputs_statement(node, is_list ? "list(" + query + ")" : query, indent);  // torch.Size is a tuple
      return;
    }
    const std::string call =
        "torch.ops." + std::string(node.kind().ns().toUnqualString()) + "." + node.kind().toUnqualString() + "." +
        (schema.overload_name().empty() ? "default" : schema.overload_name()) + "(" + joined_items(passed) + ")";
    outputs_statement(node, call, indent);
  }

  // An aten op on `self: Tensor` whose results are all numbers, bools or lists of them.
  static bool is_tensor_query(const c10::FunctionSchema& schema) {
    if (schema.name().rfind("aten::", 0) != 0 || schema.arguments().empty() || schema.returns().empty()) return false;
    const c10::Argument& first = schema.arguments()[0];
    if (first.name() != "self" || first.type()->kind() != c10::TypeKind::TensorType || first.alias_info()) return false;
    for (const c10::Argument& result : schema.returns()) {
      const c10::TypeKind kind = result.type()->kind();
      const bool scalar = kind == c10::TypeKind::IntType || kind == c10::TypeKind::FloatType ||
                          kind == c10::TypeKind::BoolType || kind == c10::TypeKind::NumberType;
      const bool list_of_ints = kind == c10::TypeKind::ListType &&
                                result.type()->containedType(0)->kind() == c10::TypeKind::IntType;
      if (!scalar && !list_of_ints) return false;
    }
    return true;
  }

  // `a = text`, `a, b = text` or `text` for a node without outputs.
  void outputs_statement(const Node& node, const std::string& text, int indent) {
    std::vector<std::string> names;
    for (const Value* output : node.outputs()) names.push_back(define(output, node));
    if (names.empty())
      line(indent) << text << "\n";
    else
      line(indent) << joined_items(names) << " = " << text << "\n";
  }

  void spelled(const Node& node, const EagerSpelling& spelling, int indent) {
    std::vector<std::string> texts = arguments(node);
    for (std::string& text : texts)
      if (!text.empty() && text[0] == '-') text = "(" + text + ")";  // -2 ** 2 is -4
    const std::string text = filled(spelling.text, texts, node);
    if (std::string_view(spelling.text).find("math.") != std::string_view::npos) imports_.insert("math");
    if (std::string_view(spelling.text).find("warnings.") != std::string_view::npos) imports_.insert("warnings");
    switch (spelling.form) {
      case EagerForm::Value:
        return value_statement(node, text, indent);
      case EagerForm::Statement:
        if (!node.outputs().empty())
          throw NoEagerForm(std::string(node.kind().toQualString()) + " returns a value its spelling does not");
        line(indent) << text << "\n";
        return;
      case EagerForm::InPlace:
        if (node.inputs().empty() || node.outputs().size() != 1 ||
            node.inputs()[0]->node()->kind() == c10::prim::Constant)
          throw NoEagerForm(std::string(node.kind().toQualString()) + " on a constant or without its one output");
        line(indent) << text << "\n";
        text_[node.output()] = texts[0];
        return;
    }
  }

  // `pattern` with {N} and {N*} replaced by the node's inputs.
  static std::string filled(const std::string& pattern, const std::vector<std::string>& texts, const Node& node) {
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] != '{') {
        out += pattern[i];
        continue;
      }
      const size_t close = pattern.find('}', i);
      std::string field = pattern.substr(i + 1, close - i - 1);
      const bool rest = !field.empty() && field.back() == '*';
      if (rest) field.pop_back();
      const size_t index = std::stoul(field);
      if (rest) {
        out += joined_items(texts, index);
      } else {
        if (index >= texts.size())
          throw NoEagerForm(std::string(node.kind().toQualString()) + " with " + std::to_string(texts.size()) +
                            " inputs where its spelling reads input " + std::to_string(index));
        out += texts[index];
      }
      i = close;
    }
    return out;
  }

  void if_statement(const Node& node, int indent) {
    std::vector<std::string> targets;
    for (const Value* output : node.outputs()) targets.push_back(define(output, node));
    line(indent) << "if " << use(node.input()) << ":\n";
    for (size_t b = 0; b < 2; ++b) {
      if (b == 1) line(indent) << "else:\n";
      const Block& branch = *node.blocks()[b];
      block_body_with_outputs(branch, targets, 0, indent + 1);
    }
  }

  // A block's nodes, then its outputs (from `from` on) assigned to `targets`.
  void block_body_with_outputs(const Block& block, const std::vector<std::string>& targets, size_t from, int indent) {
    const std::streampos start = out_.tellp();
    for (const Node* inner : block.nodes()) statement(*inner, indent);
    std::vector<std::string> values;
    for (size_t i = from; i < block.outputs().size(); ++i) values.push_back(use(block.outputs()[i]));
    assign(targets, values, indent);
    if (out_.tellp() == start) line(indent) << "pass\n";
  }

  // The value of a prim::Constant; nothing for any other value (toIValue also reads a few
  // constructed lists, which the printer writes as the nodes that build them).
  static c10::optional<c10::IValue> constant_value(const Value* value) {
    return value->node()->kind() == c10::prim::Constant ? torch::jit::toIValue(value) : c10::nullopt;
  }

  static bool is_true_constant(const Value* value) {
    const c10::optional<c10::IValue> v = constant_value(value);
    return v && v->isBool() && v->toBool();
  }

  static bool is_max_trip_count(const Value* value) {
    const c10::optional<c10::IValue> v = constant_value(value);
    return v && v->isInt() && v->toInt() == std::numeric_limits<int64_t>::max();
  }

  // for <i> in range(<trip count>): with the carried values as the loop's output variables, and the
  // condition (where it is not always True) checked before each trip. TorchScript's while loop (and
  // a for loop with a break) has the trip count INT64_MAX: that is written as a while loop on the
  // condition, because Dynamo unpacks a for loop's range whole, and a range of 2**63 - 1 took 12 GB
  // before anything was traced.
  void loop_statement(const Node& node, int indent) {
    if (loop_depth_ == 0) return loop_method(node, indent);
    ++loop_depth_;
    loop_text(node, indent);
    --loop_depth_;
  }

  // An outermost loop is a method of its own, called where the loop was: Dynamo compiles a frame
  // up to a graph break and goes on after it, but a break inside a loop (an .item(), a
  // data-dependent branch) gives up the whole frame. One flat forward then ran a detection model
  // in eager, captured nothing, and passed; as a method, only the loop's frame is left to eager,
  // as with the Python model, whose loops sit in its submodules' forwards.
  void loop_method(const Node& node, int indent) {
    std::vector<std::string> parameters;  // the loop's free locals, passed under their own names
    free_locals(node, node, parameters);
    const std::string name = "loop_" + std::to_string(++loop_methods_);
    std::ostringstream caller;
    std::swap(out_, caller);
    line(1) << "def " << name << "(self" << (parameters.empty() ? "" : ", " + joined_items(parameters)) << "):\n";
    ++loop_depth_;
    loop_text(node, 2);
    --loop_depth_;
    std::vector<std::string> results;
    for (const Value* output : node.outputs()) results.push_back(text_.at(output));
    if (!results.empty()) line(2) << "return " << (results.size() == 1 ? results[0] : tuple_text(results)) << "\n";
    methods_ << out_.str();
    std::swap(out_, caller);
    const std::string call = "self." + name + "(" + joined_items(parameters) + ")";
    if (results.empty())
      line(indent) << call << "\n";
    else
      line(indent) << joined_items(results) << " = " << call << "\n";
  }

  // The locals `within` uses that are defined before it: the values of its own inputs and of its
  // blocks' nodes (at any depth) that no node or block inside it defines, and that are names (a
  // constant is written in place, an attribute as self.<name>).
  void free_locals(const Node& within, const Node& node, std::vector<std::string>& names) {
    auto note = [&](const Value* value) {
      if (value->node()->kind() == c10::prim::Constant || defined_inside(value, within)) return;
      const auto found = text_.find(value);
      if (found == text_.end() || found->second.rfind("self.", 0) == 0) return;
      if (std::find(names.begin(), names.end(), found->second) == names.end()) names.push_back(found->second);
    };
    for (const Value* input : node.inputs()) note(input);
    for (const Block* block : node.blocks()) {
      for (const Node* inner : block->nodes()) free_locals(within, *inner, names);
      for (const Value* output : block->outputs()) note(output);
    }
  }

  static bool defined_inside(const Value* value, const Node& within) {
    for (const Block* block = value->node()->owningBlock(); block; ) {
      const Node* owner = block->owningNode();
      if (owner == &within) return true;
      if (!owner) return false;
      block = owner->owningBlock();
    }
    return false;
  }

  void loop_text(const Node& node, int indent) {
    const Block& body = *node.blocks()[0];
    std::vector<std::string> carried, initial;
    for (size_t i = 0; i < node.outputs().size(); ++i) {
      carried.push_back(define(node.outputs()[i], node));
      initial.push_back(use(node.inputs()[i + 2]));
      text_[body.inputs()[i + 1]] = carried.back();
    }
    assign(carried, initial, indent);
    const bool checks_condition = !(is_true_constant(node.inputs()[1]) && is_true_constant(body.outputs()[0]));
    std::string condition;
    if (checks_condition) {
      condition = local_name(node.inputs()[1], "condition");
      line(indent) << condition << " = " << use(node.inputs()[1]) << "\n";
    }
    std::vector<std::string> targets = carried;
    if (checks_condition) targets.insert(targets.begin(), condition);
    const std::string index = text_[body.inputs()[0]] = local_name(body.inputs()[0], "i");
    if (is_max_trip_count(node.inputs()[0])) {
      const bool counts = !body.inputs()[0]->uses().empty();
      if (counts) line(indent) << index << " = 0\n";
      line(indent) << "while " << (checks_condition ? condition : "True") << ":\n";
      block_body_with_outputs(body, targets, checks_condition ? 0 : 1, indent + 1);
      if (counts) line(indent + 1) << index << " = " << index << " + 1\n";
      return;
    }
    line(indent) << "for " << index << " in range(" << use(node.inputs()[0]) << "):\n";
    if (checks_condition) line(indent + 1) << "if not " << condition << ":\n", line(indent + 2) << "break\n";
    block_body_with_outputs(body, targets, checks_condition ? 0 : 1, indent + 1);
  }

  const Graph& graph_;
  const std::vector<bool>& lifted_;
  std::unordered_map<const Value*, std::string> text_;
  std::set<std::string> used_locals_;
  std::set<std::string> attribute_names_;
  std::vector<EagerAttribute> attributes_;
  std::set<std::string> imports_;
  std::ostringstream out_;
  std::ostringstream methods_;  // the loops' methods, after forward
  int loop_depth_ = 0;
  int loop_methods_ = 0;
};

}  // namespace

std::string module_attribute_name(const Value* input, std::set<std::string>& used) {
  std::string name = input->hasDebugName() ? identifier_from(input->debugNameBase()) : "";
  if (name.empty() || name[0] == '_' || std::isdigit(static_cast<unsigned char>(name[0])) ||
      kTakenAttributeNames.count(name))
    name = "state_" + name;
  std::string unique = name;
  for (int n = 2; used.count(unique); ++n) unique = name + "_" + std::to_string(n);
  used.insert(unique);
  return unique;
}

EagerModule eager_module(const Graph& graph, const std::vector<bool>& lifted) {
  try {
    return EagerPrinter(graph, lifted).print();
  } catch (const NoEagerForm& refusal) {
    EagerModule m;
    m.refused = refusal.what();
    return m;
  }
}

std::string eager_module_file(const EagerModule& module) {
  std::string text = "import torch\n";
  for (const std::string& name : module.imports) text += "import " + name + "\n";
  return text + "\n\nclass Repro(torch.nn.Module):\n" + module.forward;
}

}  // namespace tsrepro
