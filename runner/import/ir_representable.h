#pragma once
// A graph becomes a case only if its IR text reads back (torch::jit::parseIR). What inlining and
// scripting leave behind that the text cannot name is removed or rewritten here; what is left
// is named in a one-line error.

#include <string>

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

// - drops unused constants of function type (inlining leaves `prim::Constant` of type
//   __torch__.torch.nn.functional.layer_norm behind) and other unused class-typed constants;
// - turns NamedTuple types (torchvision's GoogLeNetOutputs, ...) into plain tuples of the
//   same elements: the interpreter indexes both alike;
// - drops aten::warn (the interpreter misreads it in a graph without source ranges, and the
//   executor refuses its one-argument form; a warning changes no value);
// - throws UserError("<origin>: %v = 'kind' (file:line: source) has a value of type T, ...") for a
//   value whose type IR text cannot express (a class, an interface, a function).
void make_ir_representable(torch::jit::Graph& graph, const std::string& origin);

}  // namespace tsrepro
