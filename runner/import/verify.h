#pragma once
// `tsrepro import MODEL.pt ... --verify BACKEND[,BACKEND...]`: the case judged against its model.
// For each backend the saved model runs through the public calls a program makes on it
// (torch.jit.load, then Backend::prepare_module: its unoptimized run as the reference, the
// backend's own calls as the tested side) and the case through tsrepro, each in a worker, on the
// same inputs. Import is faithful when the two agree on the verdict (status, phase, signature),
// and on every output of both sides, within the RunSpec's tolerance.

#include <string>
#include <vector>

#include "tsrepro/case.h"
#include "tsrepro/run_spec.h"
#include "tsrepro/verdict.h"

namespace tsrepro {

class RunnerProcess;

struct FidelityCheck {
  std::string backend;
  Verdict model;       // the saved model, judged through the public calls
  Verdict case_side;   // the case, judged by tsrepro
  std::string difference;  // the first difference, for people; empty when the two agree
  // The backend takes the case another way than a saved model (Backend::takes_saved_model_as_case):
  // only the case was judged, its route check (the module form against the TorchScript reference)
  // standing for the comparison with the model.
  bool case_only = false;
};

// One check per backend of `backends`, in order, under `base` with its backend replaced. `c` is
// the imported case (not yet written), `model_path` the module it was imported from.
std::vector<FidelityCheck> verify_case_against_model(const Case& c, const std::string& model_path,
                                                     const std::vector<std::string>& backends, const RunSpec& base,
                                                     RunnerProcess& runner);

// The model's own reference run on the case's inputs: how import tells a model that fails on its
// inputs (a case with that verdict) from a case import made fail (a defect of import).
Verdict model_reference_verdict(const Case& c, const std::string& model_path, const RunSpec& base,
                                RunnerProcess& runner);

}  // namespace tsrepro
