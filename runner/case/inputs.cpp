// Input values: reading the user's, making fake ones, moving them between devices.

#include <ATen/CPUGeneratorImpl.h>
#include <torch/script.h>

#include "runner/case/inputs.h"
#include "runner/formats/torch_save_reader.h"
#include "tsrepro/compare.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

bool is_floating_dtype(c10::ScalarType t) { return c10::isFloatingType(t) || c10::isComplexType(t); }

// Strides that describe each element exactly once (no overlap, no gaps): only those can be
// filled in place and keep their layout.
bool strides_are_dense(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  if (strides.size() != sizes.size()) return false;
  std::vector<size_t> order(sizes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (size_t dim : order) {
    if (sizes[dim] == 1) continue;
    if (strides[dim] != expected) return false;
    expected *= sizes[dim];
  }
  return true;
}

c10::IValue scalar_from_spec(const InputSpec& spec) {
  if (spec.kind == "int") return spec.value.get<int64_t>();
  if (spec.kind == "float") return spec.value.get<double>();
  if (spec.kind == "bool") return spec.value.get<bool>();
  if (spec.kind == "none") return c10::IValue();
  if (spec.kind == "int[]") return spec.value.get<std::vector<int64_t>>();
  if (spec.kind == "str") return spec.value.get<std::string>();
  throw UserError("input '" + spec.name + "': cannot make a fake value of kind '" + spec.kind +
                  (spec.dtype.empty() ? "" : " (" + spec.dtype + ")") + "'; use real inputs");
}

c10::IValue move_value(const c10::IValue& v, const c10::Device& device) {
  if (v.isTensor()) return v.toTensor().to(device);
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    for (const auto& item : v.toTupleRef().elements()) items.push_back(move_value(item, device));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (v.isList()) {
    c10::impl::GenericList list(v.toList().elementType());
    for (const c10::IValue& item : v.toListRef()) list.push_back(move_value(item, device));
    return list;
  }
  return v;
}

}  // namespace

c10::ScalarType scalar_type_from_name(const std::string& raw, const std::string& origin) {
  static const std::map<std::string, c10::ScalarType> kNames = {{"float32", at::kFloat},
                                                                {"float", at::kFloat},
                                                                {"float64", at::kDouble},
                                                                {"double", at::kDouble},
                                                                {"float16", at::kHalf},
                                                                {"half", at::kHalf},
                                                                {"bfloat16", at::kBFloat16},
                                                                {"int64", at::kLong},
                                                                {"long", at::kLong},
                                                                {"int32", at::kInt},
                                                                {"int", at::kInt},
                                                                {"int16", at::kShort},
                                                                {"short", at::kShort},
                                                                {"int8", at::kChar},
                                                                {"uint8", at::kByte},
                                                                {"bool", at::kBool},
                                                                {"complex64", at::kComplexFloat},
                                                                {"complex128", at::kComplexDouble}};
  const std::string name = raw.rfind("torch.", 0) == 0 ? raw.substr(6) : raw;
  auto found = kNames.find(name);
  if (found == kNames.end()) throw UserError(origin + ": unknown dtype '" + raw + "'");
  return found->second;
}

FakeTensorRecipe fake_tensor_recipe(const InputSpec& spec) {
  FakeTensorRecipe recipe;
  recipe.dtype = scalar_type_from_name(spec.dtype, "input '" + spec.name + "'");
  recipe.keep_strides = strides_are_dense(spec.sizes, spec.strides);
  const bool floating = is_floating_dtype(recipe.dtype);
  recipe.lo = spec.min.value_or(floating ? -1.0 : 0.0);
  recipe.hi = spec.max.value_or(floating ? 1.0 : recipe.dtype == at::kBool ? 1.0 : 9.0);
  if (recipe.hi < recipe.lo) std::swap(recipe.lo, recipe.hi);
  return recipe;
}

c10::IValue make_fake_value(const InputSpec& spec, uint64_t seed, size_t index) {
  if (spec.kind != "tensor") return scalar_from_spec(spec);
  const FakeTensorRecipe recipe = fake_tensor_recipe(spec);
  const c10::ScalarType dtype = recipe.dtype;
  const double lo = recipe.lo, hi = recipe.hi;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed + index);
  const auto options = at::TensorOptions().dtype(dtype);
  at::Tensor t =
      recipe.keep_strides ? at::empty_strided(spec.sizes, spec.strides, options) : at::empty(spec.sizes, options);
  if (dtype == at::kBool) {
    t.random_(0, 2, generator);
  } else if (is_floating_dtype(dtype)) {
    if (lo == hi)
      t.fill_(lo);
    else
      t.uniform_(lo, hi, generator);
  } else {
    t.random_(static_cast<int64_t>(std::ceil(lo)), static_cast<int64_t>(std::floor(hi)) + 1, generator);
  }
  return t.to(c10::Device(spec.device));
}

std::vector<bool> gradient_inputs(const std::vector<InputSpec>& specs) {
  std::vector<bool> wanted;
  for (const InputSpec& spec : specs) wanted.push_back(!spec.lifted || spec.requires_grad);
  return wanted;
}

std::vector<c10::IValue> with_grad_leaves(std::vector<c10::IValue> values, const std::vector<bool>& with_grad) {
  for (size_t i = 0; i < values.size() && i < with_grad.size(); ++i) {
    if (!with_grad[i] || !values[i].isTensor()) continue;
    const at::Tensor tensor = values[i].toTensor();
    if (tensor.defined() && tensor.is_floating_point()) values[i] = tensor.detach().requires_grad_(true);
  }
  return values;
}

std::vector<c10::IValue> make_fake_inputs(const std::vector<InputSpec>& specs, uint64_t seed) {
  std::vector<c10::IValue> values;
  for (size_t i = 0; i < specs.size(); ++i) values.push_back(make_fake_value(specs[i], seed, i));
  return values;
}

std::vector<c10::IValue> read_input_values(const std::string& path) {
  c10::IValue stored = read_torch_save(path);
  if (stored.isTuple()) return stored.toTupleRef().elements().vec();
  if (stored.isList()) return stored.toListRef().vec();
  if (stored.isTensor()) return {stored};
  throw UserError(path + ": expected a list or tuple of inputs, got " + stored.type()->repr_str());
}

namespace {

// A container read from a pickle carries no element type (List[Any], Dict(Any, Any)); the
// interpreter's ops expect the typed container the graph declares. Tensors and scalars pass as
// they are; a value that does not fit is left for check_values_fit_graph to name.
c10::IValue typed_as(const c10::IValue& value, const c10::TypePtr& type) {
  if (auto optional = type->cast<c10::OptionalType>())
    return value.isNone() ? value : typed_as(value, optional->getElementType());
  if (auto list_type = type->cast<c10::ListType>(); list_type && value.isList()) {
    c10::impl::GenericList list(list_type->getElementType());
    for (const c10::IValue& item : value.toListRef()) list.push_back(typed_as(item, list_type->getElementType()));
    return list;
  }
  if (auto tuple_type = type->cast<c10::TupleType>(); tuple_type && value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    if (elements.size() != tuple_type->elements().size()) return value;
    std::vector<c10::IValue> items;
    for (size_t i = 0; i < elements.size(); ++i) items.push_back(typed_as(elements[i], tuple_type->elements()[i]));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (auto dict_type = type->cast<c10::DictType>(); dict_type && value.isGenericDict()) {
    c10::impl::GenericDict dict(dict_type->getKeyType(), dict_type->getValueType());
    for (const auto& entry : value.toGenericDict())
      dict.insert(entry.key(), typed_as(entry.value(), dict_type->getValueType()));
    return dict;
  }
  return value;
}

}  // namespace

void conform_to_graph_inputs(std::vector<c10::IValue>& values, const torch::jit::Graph& graph) {
  for (size_t i = 0; i < values.size() && i < graph.inputs().size(); ++i)
    values[i] = typed_as(values[i], graph.inputs()[i]->type());
}

std::vector<c10::IValue> values_to_device(const std::vector<c10::IValue>& values, const c10::Device& device) {
  std::vector<c10::IValue> moved;
  for (const c10::IValue& v : values) moved.push_back(move_value(v, device));
  return moved;
}

void graph_constants_to_device(torch::jit::Graph& graph, const c10::Device& device) {
  std::function<void(torch::jit::Block*)> visit = [&](torch::jit::Block* block) {
    for (torch::jit::Node* node : block->nodes()) {
      if (node->kind() == c10::prim::Constant && node->output()->type()->kind() == c10::TypeKind::DeviceObjType &&
          node->hasAttribute(c10::attr::value)) {
        node->s_(c10::attr::value, device.str());
      }
      for (torch::jit::Block* inner : node->blocks()) visit(inner);
    }
  };
  visit(graph.block());
}

void check_values_fit_graph(const torch::jit::Graph& graph, size_t user_input_count,
                            const std::vector<c10::IValue>& values, const std::string& origin) {
  if (values.size() != user_input_count) {
    std::string names;
    for (size_t i = 0; i < user_input_count; ++i) names += (i ? ", " : "") + graph.inputs()[i]->debugName();
    throw UserError(origin + ": the graph takes " + std::to_string(user_input_count) + " inputs (" + names +
                    ") but the file holds " + std::to_string(values.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const torch::jit::Value* input = graph.inputs()[i];
    const std::string where = origin + ": input " + std::to_string(i) + " (" + input->debugName() + ")";
    if (auto tensor_type = input->type()->cast<c10::TensorType>()) {
      if (!values[i].isTensor()) throw UserError(where + " must be a Tensor, got " + values[i].type()->repr_str());
      const auto wanted = tensor_type->scalarType();
      if (wanted && *wanted != values[i].toTensor().scalar_type())
        throw UserError(where + " must be " + dtype_name(*wanted) + ", got " +
                        dtype_name(values[i].toTensor().scalar_type()));
    } else if (!values[i].type()->isSubtypeOf(*input->type())) {
      throw UserError(where + " must be " + input->type()->repr_str() + ", got " + values[i].type()->repr_str());
    }
  }
}

}  // namespace tsrepro

namespace tsrepro {

std::vector<c10::IValue> clone_values(const std::vector<c10::IValue>& values) {
  std::function<c10::IValue(const c10::IValue&)> clone = [&](const c10::IValue& v) -> c10::IValue {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      // An undefined tensor (the attention weights _native_multi_head_attention skipped) has
      // nothing to copy.
      if (!t.defined()) return v;
      // clone() keeps the strides of dense tensors; requires_grad is kept as a fresh leaf.
      return t.detach().clone().requires_grad_(t.requires_grad());
    }
    if (v.isTuple()) {
      std::vector<c10::IValue> items;
      for (const c10::IValue& item : v.toTupleRef().elements()) items.push_back(clone(item));
      return c10::ivalue::Tuple::create(std::move(items));
    }
    if (v.isList()) {
      c10::impl::GenericList list(v.toList().elementType());
      for (const c10::IValue& item : v.toListRef()) list.push_back(clone(item));
      return list;
    }
    // A dict a graph writes into (`out[name] = x`, fed in where a cut removed what filled it
    // before) is a fresh dict per run, as a list is.
    if (v.isGenericDict()) {
      const c10::impl::GenericDict& dict = v.toGenericDict();
      c10::impl::GenericDict copy(dict.keyType(), dict.valueType());
      for (const auto& entry : dict) copy.insert(entry.key(), clone(entry.value()));
      return copy;
    }
    return v;
  };
  std::vector<c10::IValue> copies;
  for (const c10::IValue& v : values) copies.push_back(clone(v));
  return copies;
}

std::vector<c10::IValue> fresh_copies(const std::vector<c10::IValue>& values, const std::vector<bool>& written) {
  std::vector<c10::IValue> out;
  for (size_t i = 0; i < values.size(); ++i) {
    const bool copy = i >= written.size() || written[i];
    if (copy)
      out.push_back(clone_values({values[i]})[0]);
    else
      // A fresh leaf on the same storage, requiring grad where the value did: a profiling run
      // must see the requires_grad its real runs will have, or the executor's plan has no
      // differentiable graph and --backward tests the fallback path instead.
      out.push_back(values[i].isTensor() ? c10::IValue(values[i].toTensor().detach().requires_grad_(
                                               values[i].toTensor().requires_grad()))
                                         : values[i]);
  }
  return out;
}

}  // namespace tsrepro
