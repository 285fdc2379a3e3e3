// `aoti`: the path a C++ service takes. torch._inductor.aoti_compile_and_package of torch.export's
// program of the case (the compile server, backends/aoti/compile.py: of the eager module form, or
// with route=converter the TorchScript converter's program: backends/pt2_program.h), then the
// package loaded and run here, in the worker, by torch::inductor::AOTIModelPackageLoader. Options:
// route, export=default|draft (backends/pt2_program.h), config=KEY=VALUE[;...] and freezing=0|1
// (torch._inductor.config, as for inductor: backends/inductor/options.h).

#include <torch/csrc/jit/ir/ir.h>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#endif

#include "backends/builtin.h"
#include "backends/case_module.h"
#include "backends/inductor/options.h"
#include "backends/pt2_program.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

#if TORCH_VERSION_MAJOR >= 2
// A package's inputs are the tensors among forward's arguments, flattened in pytree order (lists
// and tuples in order; export fixed the others as constants); its outputs, the tensors of the
// module's return value.
std::vector<at::Tensor> flattened_tensors(const std::vector<c10::IValue>& values) {
  std::vector<at::Tensor> tensors;
  for (const c10::IValue& value : values) {
    if (value.isTensor()) tensors.push_back(value.toTensor());
    if (value.isList() || value.isTuple()) {
      const std::vector<at::Tensor> inner =
          flattened_tensors(value.isList() ? value.toListRef().vec() : value.toTupleRef().elements().vec());
      tensors.insert(tensors.end(), inner.begin(), inner.end());
    }
  }
  return tensors;
}

// A type an AOTInductor package can return: a tensor, or tuples of them (returned flat).
bool holds_only_tensors(const c10::TypePtr& type) {
  if (type->kind() == c10::TypeKind::TensorType) return true;
  if (type->kind() != c10::TypeKind::TupleType) return false;
  for (const c10::TypePtr& element : type->containedTypes())
    if (!holds_only_tensors(element)) return false;
  return true;
}

// The package's flat tensors as a value of `type`, taken from `next` on.
c10::IValue unflattened(const c10::TypePtr& type, const std::vector<at::Tensor>& flat, size_t& next) {
  if (type->kind() == c10::TypeKind::TensorType) {
    if (next >= flat.size()) throw std::runtime_error("the AOTInductor package returned fewer tensors than the case");
    return flat[next++];
  }
  std::vector<c10::IValue> elements;
  for (const c10::TypePtr& element : type->containedTypes()) elements.push_back(unflattened(element, flat, next));
  return c10::ivalue::Tuple::create(std::move(elements));
}

// Every output a tensor or a tuple of them: their types. Else UserError (the evaluation's invalid).
std::vector<c10::TypePtr> package_output_types(const std::vector<c10::TypePtr>& types, const std::string& what) {
  for (const c10::TypePtr& type : types)
    if (!holds_only_tensors(type))
      throw UserError("--backend aoti: " + what + " returns a " + type->annotation_str() +
                      "; an AOTInductor package returns tensors only (minify under export or inductor)");
  return types;
}

// The package's flat outputs in the shape of `shape`, the module form's own outputs run eagerly:
// tuples, lists and dicts walked in torch.export's pytree order, one returned entry per leaf. A
// tensor leaf is the package's tensor (None where it returned an undefined one: a wrong result the
// comparison judges). Another leaf (an int, a float, a bool, None) is a constant of the program's
// output spec, which the loader returns as a 0-dim tensor (None as an undefined one): its value is
// the export's, so the eager run's, which agreed with the reference.
c10::IValue refilled(const c10::IValue& shape, const std::vector<at::Tensor>& flat, size_t& next) {
  const bool leaf = !(shape.isTuple() || shape.isList() || shape.isGenericDict());
  if (leaf && next >= flat.size())
    throw std::runtime_error("the AOTInductor package returned fewer outputs than the case has");
  if (shape.isTensor()) {
    const at::Tensor& returned = flat[next++];
    return returned.defined() ? c10::IValue(returned) : c10::IValue();
  }
  if (leaf) {
    ++next;
    return shape;
  }
  if (shape.isTuple()) {
    std::vector<c10::IValue> elements;
    for (const c10::IValue& element : shape.toTupleRef().elements()) elements.push_back(refilled(element, flat, next));
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  if (shape.isList()) {
    c10::impl::GenericList list(shape.toList().elementType());
    for (const c10::IValue& element : shape.toListRef()) list.push_back(refilled(element, flat, next));
    return list;
  }
  if (shape.isGenericDict()) {
    const c10::impl::GenericDict source = shape.toGenericDict();
    c10::impl::GenericDict dict(source.keyType(), source.valueType());
    for (const auto& entry : source) dict.insert(entry.key(), refilled(entry.value(), flat, next));
    return dict;
  }
  return shape;
}

class PackageProgram : public PreparedGraph {
 public:
  PackageProgram(Pt2Compilation compilation, std::vector<c10::TypePtr> output_types)
      : compilation_(std::move(compilation)), output_types_(std::move(output_types)), loader_(compilation_.package) {}
  // On the module route: the outputs in the shape of the eager module form's (refilled).
  PackageProgram(Pt2Compilation compilation, std::vector<c10::IValue> output_shape)
      : compilation_(std::move(compilation)), output_shape_(std::move(output_shape)), loader_(compilation_.package) {}

  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override {
    seed_random_generators();
    const std::vector<at::Tensor> returned =
        loader_.run(flattened_tensors(forward_inputs(inputs, compilation_.lifted)));
    std::vector<c10::IValue> outputs;
    size_t next = 0;
    if (output_shape_) {
      for (const c10::IValue& shape : *output_shape_) outputs.push_back(refilled(shape, returned, next));
      if (next != returned.size())
        throw std::runtime_error("the AOTInductor package returned " + std::to_string(returned.size()) +
                                 " outputs where the case has " + std::to_string(next));
      return outputs;
    }
    for (const c10::TypePtr& type : output_types_) outputs.push_back(unflattened(type, returned, next));
    return outputs;
  }
  std::string executed_graph() const override { return "(the AOTInductor package " + compilation_.package + ")"; }

 private:
  Pt2Compilation compilation_;
  std::vector<c10::TypePtr> output_types_;  // the case's outputs (a saved model: forward's one return)
  std::optional<std::vector<c10::IValue>> output_shape_;
  torch::inductor::AOTIModelPackageLoader loader_;
};
#endif

class AotiBackend : public Pt2Backend {
 public:
  using Pt2Backend::Pt2Backend;
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
#if TORCH_VERSION_MAJOR >= 2
    Pt2Case& candidate = pt2_case(input, sample);
    if (candidate.route() == Pt2Route::Module) {  // any outputs, compared by the package's flat leaves
      std::optional<std::vector<c10::IValue>> shape = candidate.eager_outputs();
      if (!shape) shape = candidate.run_eager();
      Pt2Compilation compiled = candidate.compile();
      // bisect=export (backends/aoti/compile.py): the ExportedProgram runs in the server, no package
      if (compiled.package.empty()) return run_in_python(std::move(compiled));
      return std::make_unique<PackageProgram>(std::move(compiled), std::move(*shape));
    }
    std::vector<c10::TypePtr> types;
    for (const torch::jit::Value* output : input.graph->outputs()) types.push_back(output->type());
    types = package_output_types(types, "the case");
    Pt2Compilation compiled = candidate.compile();
    if (compiled.package.empty()) return run_in_python(std::move(compiled));
    return std::make_unique<PackageProgram>(std::move(compiled), types);
#else
    (void)input, (void)sample;
    require_pytorch2("aoti");
    return nullptr;
#endif
  }
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
#if TORCH_VERSION_MAJOR >= 2
    const c10::TypePtr returned = module.get_method("forward").function().getSchema().returns().at(0).type();
    const auto types = package_output_types({returned}, "the model's forward");
    return std::make_unique<PackageProgram>(compile_saved_model("aoti", options(), module, sample), types);
#else
    (void)module, (void)sample;
    require_pytorch2("aoti");
    return nullptr;
#endif
  }
};

}  // namespace

std::unique_ptr<Backend> make_aoti_backend(const std::string&, const BackendOptions& options) {
  require_pytorch2("aoti");
  const Pt2Route route = pt2_route(options, Pt2Route::Module);
  return std::make_unique<AotiBackend>(
      "aoti", with_export_option(InductorOptions::from(options).server_options(), options, route), route,
      /*route_is_the_subject=*/false);
}

}  // namespace tsrepro
