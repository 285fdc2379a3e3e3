#pragma once
// Attribute writes as state threaded through the graph. A scripted module may write its own or
// a submodule's attributes in forward (prim::SetAttr): torchvision's RAFT stores its correlation
// pyramid on a submodule and reads it back in every refinement iteration; a recurrent module keeps
// its state across loop iterations. A standalone graph has no module to write to, so each written
// attribute becomes a value: its initial value (what the module held when the case was made) at
// the top of the graph, every write a new value, and every read the value that the last write
// before it, in program order, produced. A write inside a prim::If gives the If an output (each
// branch yields its last value); one inside a loop body makes the value loop-carried. The case then
// runs as the module did. The module's attribute after the call is not an output: tsrepro compares
// what forward returns.

#include <functional>
#include <optional>
#include <string>

#include <ATen/core/jit_type_base.h>

namespace torch::jit {
struct Graph;
struct Node;
struct Value;
}  // namespace torch::jit

namespace tsrepro {

// What the pass needs to know about the module.
struct AttributeResolver {
  // "self.corr_block.corr_pyramid" for a prim::GetAttr/prim::SetAttr on a known module object;
  // nullopt where the object is not known before the program runs.
  std::function<std::optional<std::string>(torch::jit::Node* access)> path_of;
  // The attribute's declared type (If outputs and loop-carried values get it).
  std::function<c10::TypePtr(torch::jit::Node* write)> declared_type;
  // The attribute's value when the case was made, as a value available at the top of the graph
  // (called with the graph's insertion point at its first node).
  std::function<torch::jit::Value*(const std::string& path, torch::jit::Node* write)> initial_value;
};

// Replaces the reads and writes of every attribute the graph writes (see above). Throws
// UserError(origin + ": ...") for a write it cannot thread: on an object not known before the
// program runs, or inside a block of a node other than prim::If and prim::Loop.
void thread_attribute_writes(torch::jit::Graph& graph, const AttributeResolver& resolver, const std::string& origin);

// The same for objects of TorchScript classes that the graph itself creates (prim::CreateObject:
// torchvision's detection models wrap their images in an ImageList): where every use of the object
// reads or writes one of its attributes, each attribute becomes a threaded value (nothing before
// the constructor's write) and the object goes away; IR text could not name its class. Objects
// that escape (returned, stored, passed on) are left as they are.
void thread_created_object_attributes(torch::jit::Graph& graph, const std::string& origin);

}  // namespace tsrepro
