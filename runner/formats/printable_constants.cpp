// make_constants_printable: constants libtorch prints but cannot parse back, rebuilt from
// constants it can (runner/formats/printable_constants.h says which and how).

#include "runner/formats/printable_constants.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {
namespace {

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// A subnormal x is x * 2^600 (normal) times 2^-600 (normal); the product is exactly x again.
constexpr int kSubnormalScaleExponent = 600;

bool printable_double(double d) { return std::isfinite(d) && (d == 0 || std::fabs(d) >= DBL_MIN); }

// Whether libtorch's printer writes the string as its parser reads it back: not with bytes from
// 0x80 (broken octal escapes of signed chars), and not with a carriage return (printed "\r",
// which the parser does not know: found by fuzz/ir_text_fuzzer, on 1.13.1 and 2.6.0).
bool prints_back(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80 || c == '\r') return false;
  return true;
}

// What the parser reads back as the same IValue from libtorch's printed form.
bool printable(const c10::IValue& v) {
  if (v.isDouble()) return printable_double(v.toDouble());
  if (v.isComplexDouble()) return false;
  if (v.isString()) return prints_back(v.toStringRef());
  if (v.isTuple() || v.isGenericDict()) return false;
  if (v.isList()) {
    const c10::List<c10::IValue> list = v.toList();
    const c10::TypePtr element = list.elementType();
    const bool literal_kind = element->kind() == c10::TypeKind::IntType ||
                              element->kind() == c10::TypeKind::FloatType ||
                              element->kind() == c10::TypeKind::StringType;
    if (!literal_kind || list.empty()) return false;
    for (size_t i = 0; i < list.size(); ++i)
      if (!printable(list.get(i))) return false;
    return true;
  }
  return true;  // ints, bools, None, devices; other kinds are not rewritten (see build)
}

bool rebuildable(const c10::IValue& v) {
  return v.isDouble() || v.isComplexDouble() || v.isString() || v.isTuple() || v.isGenericDict() || v.isList() ||
         v.isInt() || v.isBool() || v.isNone() || v.isDevice();
}

std::string parseable_string_literal(const std::string& bytes) {
  std::string literal = "\"";
  for (unsigned char c : bytes) {
    if (c == '"' || c == '\\') {
      literal += '\\';
      literal += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      literal += static_cast<char>(c);
    } else {
      char octal[5];
      std::snprintf(octal, sizeof octal, "\\%03o", static_cast<unsigned>(c));
      literal += octal;
    }
  }
  return literal + "\"";
}

class ConstantRebuilder {
 public:
  explicit ConstantRebuilder(Graph& graph) : graph_(graph) {}

  // A value equal to `v`, built before the current insertion point from printable constants.
  Value* build(const c10::IValue& v) {
    if (v.isDouble()) return build_double(v.toDouble());
    if (v.isComplexDouble()) {
      const c10::complex<double> z = v.toComplexDouble();
      return graph_.insert(c10::Symbol::fromQualString("aten::Complex"),
                           {build_double(z.real()), build_double(z.imag())});
    }
    if (v.isString() && !prints_back(v.toStringRef())) return build_string(v.toStringRef());
    if (v.isTuple()) {
      std::vector<Value*> items;
      for (const c10::IValue& item : v.toTupleRef().elements()) items.push_back(build(item));
      return graph_.insertNode(graph_.createTuple(items))->output();
    }
    if (v.isGenericDict()) {
      const c10::impl::GenericDict dict = v.toGenericDict();
      std::vector<Value*> keys, values;
      for (const auto& entry : dict) {
        keys.push_back(build(entry.key()));
        values.push_back(build(entry.value()));
      }
      return graph_.insertNode(graph_.createDict(dict.keyType(), dict.valueType(), keys, values))->output();
    }
    if (v.isList() && !printable(v)) {
      const c10::List<c10::IValue> list = v.toList();
      std::vector<Value*> items;
      for (size_t i = 0; i < list.size(); ++i) items.push_back(build(list.get(i)));
      return graph_.insertNode(graph_.createList(list.elementType(), items))->output();
    }
    return graph_.insertConstant(v);
  }

  StringLiteralFixes take_fixes() { return std::move(fixes_); }

 private:
  Value* build_double(double d) {
    if (printable_double(d)) return graph_.insertConstant(d);
    if (!std::isfinite(d)) {
      const char* text = std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf";
      return graph_.insert(c10::Symbol::fromQualString("aten::Float"), {graph_.insertConstant(std::string(text))});
    }
    const double scaled = std::ldexp(d, kSubnormalScaleExponent);
    const double factor = std::ldexp(1.0, -kSubnormalScaleExponent);
    return graph_.insert(c10::Symbol::fromQualString("aten::mul"),
                         {graph_.insertConstant(scaled), graph_.insertConstant(factor)});
  }

  Value* build_string(const std::string& bytes) {
    const std::string placeholder = "tsrepro_string_" + std::to_string(fixes_.size());
    fixes_["\"" + placeholder + "\""] = parseable_string_literal(bytes);
    return graph_.insertConstant(placeholder);
  }

  Graph& graph_;
  StringLiteralFixes fixes_;
};

// Only constants of these types can be unprintable: a look at the type spares the toIValue of
// every other constant (graph_to_ir runs on every candidate).
bool may_be_unprintable(const c10::TypePtr& type) {
  switch (type->kind()) {
    case c10::TypeKind::FloatType:
    case c10::TypeKind::ComplexType:
    case c10::TypeKind::StringType:
    case c10::TypeKind::ListType:
    case c10::TypeKind::TupleType:
    case c10::TypeKind::DictType:
      return true;
    default:
      return false;
  }
}

std::optional<c10::IValue> constant_value(Value* output) {
  try {
    const auto value = torch::jit::toIValue(output);  // c10::optional on 1.13
    return value ? std::optional<c10::IValue>(*value) : std::nullopt;
  } catch (const std::exception&) {  // libtorch throws a std::runtime_error here
    // A constant the interpreter cannot hold either (IR text's bare `inf`): printed as it is,
    // for the interpreter to refuse by name when it compiles the graph.
    return std::nullopt;
  }
}

void collect_unprintable(torch::jit::Block* block, std::vector<Node*>& found) {
  for (Node* node : block->nodes()) {
    if (node->kind() == c10::prim::Constant && node->outputs().size() == 1 &&
        may_be_unprintable(node->output()->type())) {
      const std::optional<c10::IValue> value = constant_value(node->output());
      if (value && rebuildable(*value) && !printable(*value)) found.push_back(node);
    }
    for (torch::jit::Block* sub : node->blocks()) collect_unprintable(sub, found);
  }
}

// The string attributes (kinds s and ss) left after the constants are rebuilt whose bytes libtorch
// prints wrongly (an op the graph names with a str attribute; found by fuzz/ir_text_fuzzer).
std::vector<std::pair<Node*, c10::Symbol>> unprintable_string_attributes(torch::jit::Block* block) {
  std::vector<std::pair<Node*, c10::Symbol>> found;
  std::vector<torch::jit::Block*> blocks{block};
  while (!blocks.empty()) {
    torch::jit::Block* current = blocks.back();
    blocks.pop_back();
    for (Node* node : current->nodes()) {
      for (torch::jit::Block* sub : node->blocks()) blocks.push_back(sub);
      if (!node->hasAttributes()) continue;  // constants too: prim::Constant[yalue="..."] parses
      for (const c10::Symbol name : node->attributeNames()) {
        const torch::jit::AttributeKind kind = node->kindOf(name);
        bool prints = true;
        if (kind == torch::jit::AttributeKind::s) prints = prints_back(node->s(name));
        if (kind == torch::jit::AttributeKind::ss)
          for (const std::string& item : node->ss(name)) prints = prints && prints_back(item);
        if (!prints) found.emplace_back(node, name);
      }
    }
  }
  return found;
}

std::vector<Node*> unprintable_constants(const Graph& graph) {
  std::vector<Node*> found;
  collect_unprintable(const_cast<Graph&>(graph).block(), found);
  return found;
}

}  // namespace

bool has_unprintable_constants(const Graph& graph) {
  return !unprintable_constants(graph).empty() ||
         !unprintable_string_attributes(const_cast<Graph&>(graph).block()).empty();
}

StringLiteralFixes make_constants_printable(Graph& graph) {
  ConstantRebuilder rebuilder(graph);
  for (Node* constant : unprintable_constants(graph)) {
    torch::jit::WithInsertPoint here(constant);
    Value* rebuilt = rebuilder.build(*torch::jit::toIValue(constant->output()));
    const std::string name = constant->output()->hasDebugName() ? constant->output()->debugName() : "";
    constant->output()->replaceAllUsesWith(rebuilt);
    constant->destroy();
    if (!name.empty()) rebuilt->setDebugName(name);
  }
  StringLiteralFixes fixes = rebuilder.take_fixes();
  auto placeholder_for = [&fixes](const std::string& bytes) {
    const std::string placeholder = "tsrepro_string_" + std::to_string(fixes.size());
    fixes["\"" + placeholder + "\""] = parseable_string_literal(bytes);
    return placeholder;
  };
  for (const auto& [node, name] : unprintable_string_attributes(graph.block())) {
    if (node->kindOf(name) == torch::jit::AttributeKind::s) {
      node->s_(name, placeholder_for(node->s(name)));
    } else {
      std::vector<std::string> items = node->ss(name);
      for (std::string& item : items)
        if (!prints_back(item)) item = placeholder_for(item);
      node->ss_(name, items);
    }
  }
  return fixes;
}

}  // namespace tsrepro
