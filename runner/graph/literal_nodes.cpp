// Nodes that only pack constants into a list, tuple or dict nothing writes: literals, not
// operations (include/tsrepro/case.h). Its own file: the capture library, which links no more of
// the runner than it needs, reads node origins, and they leave literals out too.

#include <algorithm>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

#include "tsrepro/case.h"

namespace tsrepro {

namespace {

// Whether `user` may write the value it reads as input `offset` (aten::append on a list): then
// the value is state, not a literal. Nodes without a schema count as writers, except the ones
// that only pack values or take containers apart.
bool may_write(const torch::jit::Node& user, size_t offset) {
  static const std::vector<c10::Symbol> kReadOnly = {
      c10::prim::ListConstruct, c10::prim::TupleConstruct, c10::prim::DictConstruct, c10::prim::ListUnpack,
      c10::prim::TupleUnpack,   c10::prim::TupleIndex,     c10::prim::Return};
  if (std::find(kReadOnly.begin(), kReadOnly.end(), user.kind()) != kReadOnly.end()) return false;
  const c10::FunctionSchema* schema = user.maybeSchema();
  if (!schema || offset >= schema->arguments().size()) return true;
  const c10::AliasInfo* alias = schema->arguments()[offset].alias_info();
  return alias && alias->isWrite();
}

}  // namespace

bool packs_constants_only(const torch::jit::Node& node) {
  const c10::Symbol kind = node.kind();
  if (kind != c10::prim::ListConstruct && kind != c10::prim::TupleConstruct && kind != c10::prim::DictConstruct)
    return false;
  for (const torch::jit::Value* input : node.inputs())
    if (is_compute_node(*input->node())) return false;
  for (const torch::jit::Use& use : node.output()->uses())
    if (may_write(*use.user, use.offset)) return false;
  return true;
}

bool is_compute_node(const torch::jit::Node& node) {
  return node.kind() != c10::prim::Constant && !packs_constants_only(node);
}

}  // namespace tsrepro
