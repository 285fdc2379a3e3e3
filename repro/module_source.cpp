// module_form: the case's graph as a module's source (see module_source.h).

#include "repro/module_source.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include <spdlog/spdlog.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/serialization/python_print.h>

#include "backends/case_module.h"
#include "backends/eager_module.h"
#include "repro/reproducer_case.h"
#include "runner/graph/strict_fusion.h"
#include "runner/word_lists.h"
#include "tsrepro/error.h"
#include "tsrepro/case.h"

namespace tsrepro {
namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// As torch.jit.script sees `self.<name> = value` in __init__: typed by the value.
void register_attribute(torch::jit::Module& module, const ModuleAttribute& attribute) {
  if (attribute.value.isTensor())
    module.register_buffer(attribute.name, attribute.value.toTensor());
  else
    module.register_attribute(attribute.name, attribute.value.type(), attribute.value);
}

// The names printed source uses that libtorch's own frontend does not know, resolved as
// torch.jit.load resolves them: `ops.<namespace>.<op>` (prim::RaiseException, torchvision::nms)
// and `annotate(T, value)`. repro.cpp defines the same resolver (templates/repro_cpp/module.cpp.in).
struct PrintedNamesResolver : torch::jit::Resolver {
  struct Namespaces : torch::jit::SugaredValue {
    std::string kind() const override { return "ops"; }
    std::shared_ptr<torch::jit::SugaredValue> attr(const torch::jit::SourceRange&, torch::jit::GraphFunction&,
                                                   const std::string& name) override {
      return std::make_shared<torch::jit::BuiltinModule>(name);
    }
  };
  // `__torch__.torch.jit.strict_fusion`, the one class printed source names (a with block's object,
  // runner/graph/strict_fusion.h).
  struct ClassPath : torch::jit::SugaredValue {
    explicit ClassPath(std::string path) : path(std::move(path)) {}
    std::string kind() const override { return path; }
    std::shared_ptr<torch::jit::SugaredValue> attr(const torch::jit::SourceRange&, torch::jit::GraphFunction&,
                                                   const std::string& name) override {
      const std::string longer = path + "." + name;
      if (longer == strict_fusion_class()->name()->qualifiedName())
        return std::make_shared<torch::jit::ClassValue>(strict_fusion_class());
      return std::make_shared<ClassPath>(longer);
    }
    std::string path;
  };
  std::shared_ptr<torch::jit::SugaredValue> resolveValue(const std::string& name, torch::jit::GraphFunction& f,
                                                         const torch::jit::SourceRange& loc) override {
    if (name == "annotate") return torch::jit::SpecialFormValue::create(c10::prim::annotate);
    if (name == "__torch__") return std::make_shared<ClassPath>(name);
    return name == "ops" ? std::make_shared<Namespaces>() : torch::jit::nativeResolver()->resolveValue(name, f, loc);
  }
};

// ---- The graph as text that names no value -------------------------------------------------------

std::string constant_text(const Value* v) {
  const c10::optional<c10::IValue> value = torch::jit::toIValue(v);
  std::ostringstream out;
  out << "const " << v->type()->str() << " ";
  if (!value)
    out << "?";
  else if (value->isTensor())
    out << "tensor" << value->toTensor().sizes() << value->toTensor().scalar_type();
  else
    out << *value;
  return out.str();
}

std::string attributes_text(const Node* node) {
  std::string text;
  for (const c10::Symbol name : node->attributeNames()) {
    // tsrepro's own notes on a node (origin numbers, flags: node_origin.h) are no part of the op.
    if (std::string(name.toUnqualString()).rfind("tsrepro_", 0) == 0) continue;
    text += "[" + std::string(name.toUnqualString()) + "=";
    switch (node->kindOf(name)) {
      case torch::jit::AttributeKind::s:
        text += node->s(name);
        break;
      case torch::jit::AttributeKind::i:
        text += std::to_string(node->i(name));
        break;
      case torch::jit::AttributeKind::f:
        text += std::to_string(node->f(name));
        break;
      default:
        text += "?";
        break;
    }
    text += "]";
  }
  return text;
}

struct StructurePrinter {
  std::map<const Value*, std::string> names;
  const Value* self = nullptr;
  size_t counter = 0;
  std::ostringstream out;

  std::string define(const Value* v) {
    return names[v] = "%" + std::to_string(counter++) + ":" + c10::unshapedType(v->type())->str();
  }

  template <typename Values>
  std::string uses(const Values& values) {
    std::string text;
    for (const Value* v : values) text += (text.empty() ? "" : ", ") + names[v];
    return text;
  }

  void block(const Block* b, const std::string& indent) {
    std::string params;
    for (const Value* v : b->inputs()) params += (params.empty() ? "" : ", ") + define(v);
    out << indent << "block(" << params << ")\n";
    for (const Node* node : b->nodes()) {
      if (node->kind() == c10::prim::Constant) {
        names[node->output()] = constant_text(node->output());
        continue;
      }
      if (node->kind() == c10::prim::GetAttr && node->input() == self) {  // where forward reads it is no matter
        names[node->output()] = "self." + node->s(c10::attr::name);
        continue;
      }
      std::string outputs;
      for (const Value* v : node->outputs()) outputs += (outputs.empty() ? "" : ", ") + define(v);
      out << indent << node->kind().toQualString() << attributes_text(node) << "(" << uses(node->inputs()) << ") -> ("
          << outputs << ")\n";
      for (const Block* inner : node->blocks()) block(inner, indent + "  ");
    }
    out << indent << "return(" << uses(b->outputs()) << ")\n";
  }
};

// ---- From printed TorchScript to Python that torch.jit.script reads ------------------------------

// Python's TorchScript frontend resolves `torch.X` to a Python function, which exists for some
// aten ops only (torch.slice and torch.size do not; torch.split is Python code of its own).
// torch.ops.aten.X names the op itself in every PyTorch, and reads like the aten graphs of
// PyTorch 2's compilers. Other namespaces print as ops.<ns>.X. `annotate` is torch.jit.annotate.
// Constructs with no Python spelling make the IR form stay (returned as the reason).
struct PythonRewrite {
  std::string text;
  std::set<std::string> typing;
  std::string unsupported;
};

bool identifier_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }

PythonRewrite python_from_printed(const std::string& printed) {
  static const std::set<std::string> kTypingNames = {"List", "Optional", "Tuple", "Dict", "Any", "Union"};
  static const std::map<std::string, std::string> kUnsupported = {{"uninitialized", "an uninitialized value"},
                                                                  {"unchecked_cast", "an unchecked cast"},
                                                                  {"CONSTANTS", "a tensor constant"},
                                                                  {"__torch__", "a TorchScript class"},
                                                                  {"number", "a Scalar-typed value"},
                                                                  {"NoneType", "a None-typed value"},
                                                                  {"fork", "a fork"},
                                                                  {"Future", "a future"},
                                                                  {"RRef", "a remote reference"},
                                                                  {"Await", "an await"}};
  PythonRewrite result;
  const std::string& s = printed;
  for (size_t i = 0; i < s.size();) {
    const char ch = s[i];
    if (ch == '"' || ch == '\'') {  // a string literal, copied as it is
      size_t end = i + 1;
      while (end < s.size() && s[end] != ch) end += s[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, s.size());
      result.text.append(s, i, end - i);
      i = end;
      continue;
    }
    if (!identifier_char(ch) || (i > 0 && identifier_char(s[i - 1]))) {
      result.text += ch;
      ++i;
      continue;
    }
    size_t end = i;
    while (end < s.size() && identifier_char(s[end])) ++end;
    const std::string word = s.substr(i, end - i);
    const bool attribute = i > 0 && s[i - 1] == '.';
    if (!attribute && kUnsupported.count(word) && result.unsupported.empty())
      result.unsupported = kUnsupported.at(word);
    if (!attribute && kTypingNames.count(word)) result.typing.insert(word);
    if (!attribute && word == "Tensor") {
      result.text += "torch.Tensor";
    } else if (!attribute && word == "Device") {
      result.text += "torch.device";
    } else if (!attribute && word == "annotate") {
      result.text += "torch.jit.annotate";
    } else if (!attribute && word == "ops" && end < s.size() && s[end] == '.') {
      result.text += "torch.ops";
    } else if (!attribute && word == "torch" && end < s.size() && s[end] == '.') {
      size_t name_end = end + 1;
      while (name_end < s.size() && identifier_char(s[name_end])) ++name_end;
      const std::string op = s.substr(end + 1, name_end - end - 1);
      const bool call = name_end < s.size() && s[name_end] == '(';
      result.text += call && op != "device" ? "torch.ops.aten" : "torch";
    } else {
      result.text += word;
    }
    i = end;
  }
  return result;
}

// A strict_fusion block as PythonPrint writes it, `_0 = __torch__.torch.jit.strict_fusion.__new__(...)`
// and later `with _0:`, as Python writes it: `with torch.jit.strict_fusion():`, which
// torch.jit.script compiles to the same object, Enter and Exit (runner/graph/strict_fusion.h).
std::string python_with_blocks(const std::string& printed) {
  const std::string cls = strict_fusion_class()->name()->qualifiedName();
  const std::string creation = " = " + cls + ".__new__(" + cls + ")\n";
  std::string text = printed;
  for (size_t at; (at = text.find(creation)) != std::string::npos;) {
    const size_t line_start = text.rfind('\n', at) + 1;  // npos + 1 == 0 on the first line
    const size_t name_start = text.find_first_not_of(' ', line_start);
    const std::string name = text.substr(name_start, at - name_start);
    text.erase(line_start, at + creation.size() - line_start);
    const std::string with_line = "with " + name + ":\n";
    if (const size_t with_at = text.find(with_line); with_at != std::string::npos)
      text.replace(with_at, with_line.size(), std::string("with ") + kStrictFusionMarker + "():\n");
  }
  return text;
}

// PythonPrint writes `def forward(self,\n    x: Tensor) -> Tensor:` and a two-space indent: the
// signature on one line, four spaces a level, one level inside the class.
std::string python_method_layout(const std::string& code) {
  std::istringstream in(code);
  std::string line, signature, body;
  bool in_signature = true;
  while (std::getline(in, line)) {
    if (in_signature) {
      const size_t first = line.find_first_not_of(' ');
      signature += (signature.empty() || signature.back() == '(' ? "" : " ") +
                   (first == std::string::npos ? "" : line.substr(first));
      in_signature = signature.empty() || signature.back() != ':';
      continue;
    }
    const size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    body += std::string(4 + 2 * indent, ' ') + line.substr(indent) + "\n";
  }
  return "    " + signature + "\n" + body;
}

// The printer writes a value into the expression that uses it only where the value's node comes
// right before (in argument order): reads of self and packs of constants ([1, 1]) are moved
// there. Both are pure and used once, so the graph computes the same.
void place_literals_at_their_use(Block* block) {
  for (Node* node : block->nodes()) {
    for (Block* inner : node->blocks()) place_literals_at_their_use(inner);
    for (Value* input : node->inputs()) {
      Node* producer = input->node();
      const bool literal = producer->kind() == c10::prim::GetAttr || packs_constants_only(*producer);
      if (literal && producer->owningBlock() == block && input->uses().size() == 1 && producer->outputs().size() == 1)
        producer->moveBefore(node);
    }
  }
}

ModuleForm refused(const std::string& why) {
  ModuleForm form;
  form.fallback = why;
  return form;
}

}  // namespace

std::string graph_structure_text(const Graph& graph) {
  StructurePrinter printer;
  if (!graph.inputs().empty() && graph.inputs()[0]->type()->kind() == c10::TypeKind::ClassType)
    printer.self = graph.inputs()[0];
  printer.block(graph.block(), "");
  return printer.out.str();
}

ModuleForm module_form(Graph& case_graph, const std::vector<bool>& lifted, const std::vector<c10::IValue>& values) {
  ModuleForm form;
  auto graph = case_graph.copy();
  // A tuple built and taken apart at once (a cut through a function that returned one) is its
  // values: libtorch's frontend folds it as it compiles, and every backend lowers it first.
  torch::jit::LowerSimpleTuples(graph);
  torch::jit::EliminateDeadCode(graph);
  recreate_strict_fusion_objects(*graph);  // printed as a with block on an object, as the model's
  if (graph->outputs().size() != 1) {      // forward returns one value: several outputs as one tuple
    std::vector<Value*> outputs(graph->outputs().begin(), graph->outputs().end());
    Value* tuple = graph->insertNode(graph->createTuple(outputs))->output();
    while (!graph->outputs().empty()) graph->eraseOutput(0);
    graph->registerOutput(tuple);
  }

  // The module: the lifted inputs become attributes that forward reads where it uses them (one
  // read per use, so that the printer writes self.<name> into the expression).
  torch::jit::Module module(c10::QualifiedName("__torch__.Repro"));
  module.register_attribute("training", c10::BoolType::get(), false);
  std::set<std::string> used;
  for (size_t i = 0; i < graph->inputs().size(); ++i) {
    Value* input = graph->inputs()[i];
    if (!(i < lifted.size() && lifted[i])) {
      form.forward_inputs.push_back(i);
      continue;
    }
    if (!input->hasUses()) continue;
    ModuleAttribute attribute{module_attribute_name(input, used), i, values.at(i), is_training_flag(input)};
    // torch.jit.script types an attribute by its value (a tensor, None, a bool, an int, a float);
    // the check below compiles against those types too. Other values would come back typed anew.
    static const std::set<c10::TypeKind> kTypedByValue = {c10::TypeKind::TensorType, c10::TypeKind::BoolType,
                                                          c10::TypeKind::IntType, c10::TypeKind::FloatType};
    const c10::TypePtr declared = input->type()->kind() == c10::TypeKind::OptionalType
                                      ? input->type()->expectRef<c10::OptionalType>().getElementType()
                                      : input->type();
    if (!kTypedByValue.count(declared->kind()))
      return refused("a lifted input of type " + input->type()->str() + " (an attribute Python would type anew)");
    register_attribute(module, attribute);
    form.attributes.push_back(attribute);
  }
  Value* self = graph->insertInput(0, "self");
  self->setType(module.type());
  for (const ModuleAttribute& attribute : form.attributes) {
    Value* input = graph->inputs()[attribute.input + 1];
    for (const torch::jit::Use& use : std::vector<torch::jit::Use>(input->uses())) {
      torch::jit::WithInsertPoint before(use.user);
      // Unnamed, so that the printer writes self.<name> into the expression (it keeps named values).
      use.user->replaceInput(use.offset, graph->insertGetAttr(self, attribute.name)->setDebugName(""));
    }
  }
  for (size_t i = graph->inputs().size(); i-- > 1;)
    if (i - 1 < lifted.size() && lifted[i - 1]) graph->eraseInput(i);
  place_literals_at_their_use(graph->block());
  auto* forward = module._ivalue()->compilation_unit()->create_function(
      c10::QualifiedName(*module.type()->name(), "forward"), graph);
  module.type()->addMethod(forward);

  // Printed as torch.jit.save prints it; a tensor constant goes to a table source cannot hold.
  std::vector<c10::IValue> constant_table;
  torch::jit::PrintDepsTable deps;
  torch::jit::PythonPrint printer(constant_table, deps, nullptr, /*enforce_importable=*/false);
  try {
    printer.printMethod(*forward);
  } catch (const std::exception& error) {  // an internal assert on a graph source cannot state (an
    // Exit's value returned, as a prefix the minifier tried once made): the IR form, not the end
    return refused("libtorch's printer cannot print the graph (" + one_line_error(error.what()) + ")");
  }
  if (!constant_table.empty()) return refused("a tensor constant (source holds tensors only as attributes)");
  form.printed_forward = printer.str();
  form.needs_resolver = form.printed_forward.find("ops.") != std::string::npos ||
                        form.printed_forward.find("annotate(") != std::string::npos ||
                        form.printed_forward.find("__torch__.") != std::string::npos;

  // Compiled again, the source must give the same graph.
  torch::jit::Module compiled(c10::QualifiedName("__torch__.Repro"));
  compiled.register_attribute("training", c10::BoolType::get(), false);
  for (const ModuleAttribute& attribute : form.attributes) register_attribute(compiled, attribute);
  try {
    compiled.define(form.printed_forward, std::make_shared<PrintedNamesResolver>());
  } catch (const std::exception& error) {
    std::string what = error.what();
    what.erase(0, what.find_first_not_of(" \n"));
    spdlog::debug("module form: libtorch does not compile the printed forward\n{}{}", form.printed_forward, what);
    return refused("libtorch does not compile the printed source (" + what.substr(0, what.find('\n')) + ")");
  }
  const std::string expected = graph_structure_text(*graph);
  std::shared_ptr<Graph> compiled_graph = compiled.get_method("forward").graph()->copy();
  for (Node* node : compiled_graph->nodes())  // the frontend types an Exit's value Tensor, the case NoneType
    if (node->kind() == c10::prim::Exit) node->output()->setType(c10::NoneType::get());
  const std::string compiled_text = graph_structure_text(*compiled_graph);
  if (compiled_text != expected) {
    spdlog::debug("module form: the printed forward\n{}compiles to\n{}instead of\n{}", form.printed_forward,
                  compiled_text, expected);
    return refused("compiling the printed source gives another graph");
  }

  PythonRewrite python = python_from_printed(python_with_blocks(form.printed_forward));
  if (!python.unsupported.empty()) return refused("it holds " + python.unsupported + ", which Python cannot state");
  form.python_forward = python_method_layout(python.text);
  if (!python.typing.empty()) {
    std::vector<std::string> names(python.typing.begin(), python.typing.end());
    form.python_imports.push_back("from typing import " + joined(names, ", "));
  }
  return form;
}

}  // namespace tsrepro
