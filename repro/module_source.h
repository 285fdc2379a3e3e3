#pragma once
// The case's graph as the source of a module, the form a PyTorch maintainer reads and edits:
// `class Repro(torch.nn.Module)` whose __init__ registers the graph's lifted inputs (parameters,
// buffers, flags) and whose forward is code, derived from the graph by libtorch's own printer
// (PythonPrint, what torch.jit.save writes into archives). Both reproducers use it: repro.py
// scripts the class with torch.jit.script, repro.cpp defines the forward on a torch::jit::Module.
//
// Printed code is only used where compiling it gives the very graph back: module_form compiles
// the printed forward with libtorch's frontend and compares the two graphs node by node (op,
// constants, order, types). Where they differ, or where the graph holds something source cannot
// state (a tensor constant, an uninitialized value, an unchecked cast), the reproducers keep the
// IR form and say why (`fallback`).

#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {

// A lifted input of the graph as an attribute of the module: self.<name>.
struct ModuleAttribute {
  std::string name;
  size_t input = 0;            // the graph input it stands for
  c10::IValue value;           // its value in the case
  bool training_flag = false;  // a submodule's `training` (bn1_training): eval() clears it, as in the model
};

struct ModuleForm {
  std::vector<ModuleAttribute> attributes;  // in graph input order
  std::vector<size_t> forward_inputs;       // the graph inputs forward takes, in order (several outputs: one tuple)
  // `def forward(self, ...)` as libtorch prints it (two-space indent), for Module::define.
  std::string printed_forward;
  // It calls ops.<namespace>.<op> or annotate(), or names the strict_fusion class
  // (runner/graph/strict_fusion.h): Module::define needs a resolver for them.
  bool needs_resolver = false;
  // The same forward for torch.jit.script of a Python class: ops by their schema names
  // (torch.ops.aten.conv2d: `torch.X` is not a Python function for every aten op), torch.Tensor
  // and typing's names in annotations, four-space indent, one level inside the class.
  std::string python_forward;
  std::vector<std::string> python_imports;  // "from typing import List, Optional" where needed
  std::string fallback;                     // non-empty: why the IR form is kept (then the rest is empty)
};

// `values` are the graph inputs' values (the case's own or its fake ones); `lifted` flags the
// inputs that are the module's state.
ModuleForm module_form(torch::jit::Graph& graph, const std::vector<bool>& lifted,
                       const std::vector<c10::IValue>& values);

// The graph as text that names no value: nodes in order with their ops, constants by value and
// type, values by position, blocks nested. Two graphs with the same text compute the same thing
// the same way; the comparison module_form makes. Reads of `self`'s attributes print by name.
std::string graph_structure_text(const torch::jit::Graph& graph);

}  // namespace tsrepro
