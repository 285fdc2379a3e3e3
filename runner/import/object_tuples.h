#pragma once
// Objects of TorchScript classes that the graph creates and then passes around as values become
// tuples of their attributes. torchvision's MultiScaleRoIAlign (every R-CNN's box and mask pooler)
// creates a LevelMapper on its first call and stores it on itself (`self.map_levels`, an
// Optional[LevelMapper] that is None until then); once runner/import/attribute_state.h has threaded that
// attribute, the object flows as a value through the If that creates it and is read back
// (`mapper.k_min`) by the inlined `__call__`. IR text cannot name the class, a tuple it can: the
// object's constructor writes (prim::SetAttr right after prim::CreateObject) become one
// prim::TupleConstruct of the attributes in the class's order, each read a prim::TupleIndex, and
// every value of the class's type (Optional and containers included) the tuple's type.
//
// A tuple has value semantics and an object reference semantics; the two agree only when the
// object is never written after its constructor. A class whose objects are written later, passed
// to a call that is not inlined, or created without writing every attribute is left as it is
// (import then names the value whose type IR text cannot name).

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

void created_objects_as_tuples(torch::jit::Graph& graph);

}  // namespace tsrepro
