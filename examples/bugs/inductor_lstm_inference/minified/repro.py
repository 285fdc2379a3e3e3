#!/usr/bin/env python3
# [inductor] aten::lstm returns wrong values under torch.compile with Inductor
# Made by tsrepro 0.1.0 (libtorch 2.6.0, AMD EPYC); expected failure: accuracy (accuracy:float32).
# Seen with torch 2.6.0+debian, Python 3.13.5, gcc version 14.2.0.
# Command: /tsrepro/sweep-bin/tsrepro minify /tmp/rebug/inductor_lstm_inference/case --backend inductor -o /tmp/rebug/inductor_lstm_inference/out --json
# Its nodes came from: aten::lstm at /tsrepro/src/examples/bugs/inductor_lstm_inference/make_case.py:38 (rnn, node 135)
# Exit 1: reproduced, 0: not, 2: cannot run here. Full harness: tsrepro run <case dir>.
import signal
import sys

import torch


class Repro(torch.nn.Module):  # the minified graph as plain PyTorch: its state as attributes, its forward as code
    def forward(self, argument, argument_1, argument_2):
        lstm, lstm_1, lstm_2 = torch.ops.aten.lstm.input(argument, argument_2, argument_1, True, 1, 0.0, False, False, True)
        return lstm_2


INPUTS = [
    torch.tensor([[[-1.0714776515960693, -0.11664776504039764], [0.7703714370727539, 0.39067530632019043], [-0.8323581218719482, 0.48998555541038513]]], dtype=torch.float32),
    [torch.tensor([[-0.0030564817134290934, 0.21900218725204468, -0.3360067903995514, -0.3004458546638489], [-0.15723861753940582, 0.1094747856259346, -0.008088696748018265, 0.3236957788467407], [-0.036229606717824936, 0.1080276295542717, -0.1233779713511467, -0.08024748414754868], [-0.39001941680908203, -0.2703755497932434, -0.16828937828540802, 0.0151229752227664], [0.16139492392539978, 0.2449582815170288, -0.276768296957016, -0.17777696251869202], [0.14828276634216309, 0.3390044867992401, -0.08401757478713989, 0.30549702048301697], [-0.06580283492803574, 0.04319842532277107, 0.3696591258049011, -0.37871986627578735], [-0.25700780749320984, -0.10335428267717361, -0.15913516283035278, 0.35272684693336487], [-0.26461824774742126, -0.18793010711669922, -0.2852187752723694, -0.38234943151474], [-0.2383110523223877, 0.3509294390678406, 0.1821678876876831, 0.197866752743721], [0.021470416337251663, -0.2093021720647812, 0.06906936317682266, -0.3811792731285095], [-0.29498645663261414, -0.2104642391204834, 0.25757935643196106, 0.2393646538257599], [-0.18105609714984894, -0.014730573631823063, 0.26109957695007324, 0.40585315227508545], [0.16202647984027863, 0.055151429027318954, 0.27372491359710693, -0.24037756025791168], [0.07607463002204895, -0.316517174243927, -0.2829512357711792, -0.2108943611383438], [0.18472135066986084, 0.16418130695819855, -0.24182690680027008, 0.12333471328020096], [0.22411689162254333, -0.051528025418519974, 0.015587550587952137, 0.09459305554628372], [0.25326767563819885, 0.3919976055622101, -0.3146057724952698, -0.14961065351963043], [0.16044563055038452, 0.3382538855075836, 0.3552606701850891, 0.36022064089775085], [0.08124735206365585, -0.3550056517124176, 0.03755578026175499, -0.2554023265838623], [-0.3804686963558197, 0.36272555589675903, 0.3104155957698822, -0.4072391092777252], [0.07641267776489258, -0.06877351552248001, -0.06718181073665619, -0.18687847256660461], [0.15699440240859985, -0.24180690944194794, 0.14966028928756714, 0.20645447075366974], [0.2922533452510834, 0.15264858305454254, -0.40405774116516113, -0.2648293972015381]], dtype=torch.float32), torch.tensor([[0.20384451746940613, 0.08544692397117615, -0.31846797466278076, -0.23507733643054962, 0.3840593099594116, 0.2750850021839142], [-0.17800652980804443, -0.10274988412857056, -0.38889655470848083, -0.007337911520153284, -0.3074350357055664, -0.3149050772190094], [-0.022494321689009666, 0.06129646301269531, -0.1671900451183319, 0.2422453910112381, -0.24843506515026093, 0.3704322874546051], [0.2797725200653076, -0.3442688286304474, -0.10160659998655319, 0.01842123456299305, 0.05956387147307396, 0.0968259945511818], [0.16020818054676056, 0.024454141035676003, -0.19919608533382416, 0.19317860901355743, -0.3916117250919342, -0.24197149276733398], [-0.10219673812389374, -0.1988632082939148, -0.142818883061409, -0.33460915088653564, -0.08684059977531433, 0.08726570755243301], [-0.26595979928970337, -0.02095104195177555, 0.29224488139152527, -0.041968028992414474, 0.011346125043928623, -0.03521913290023804], [0.08262185007333755, 0.2595803737640381, 0.38671165704727173, 0.25926050543785095, 0.38759645819664, -0.029525192454457283], [-0.3667382299900055, -0.19354122877120972, 0.27797839045524597, -0.002646462293341756, -0.20291833579540253, -0.31284546852111816], [-0.3820600211620331, -0.34456491470336914, -0.082807756960392, 0.22388581931591034, 0.22071580588817596, -0.39372768998146057], [0.25465795397758484, -0.31945815682411194, -0.08630789071321487, -0.16553351283073425, -0.07863485813140869, -0.08015657961368561], [-0.36634159088134766, -0.35249704122543335, -0.0638824850320816, 0.005279541015625, -0.18545696139335632, 0.1537868082523346], [-0.3674473166465759, -0.027551550418138504, 0.35902148485183716, -0.16652120649814606, 0.3686494827270508, 0.14784866571426392], [-0.36842814087867737, 0.2582976222038269, -0.04710959643125534, -0.18224483728408813, 0.32645711302757263, -0.3299035131931305], [0.04380705580115318, -0.0854744166135788, 0.29153528809547424, 0.11396028101444244, 0.19616548717021942, 0.14417654275894165], [-0.09817338734865189, -0.0858568474650383, -0.3364298343658447, 0.22120694816112518, 0.3241402208805084, 0.27933362126350403], [-0.2879694998264313, 0.01820782944560051, -0.28778815269470215, -0.22473423182964325, -0.23788852989673615, 0.13951683044433594], [-0.2432805448770523, -0.008906837552785873, 0.017174240201711655, 0.26316627860069275, -0.30860307812690735, -0.2802674472332001], [-0.23705409467220306, 0.28574663400650024, -0.14675097167491913, 0.3443528413772583, 0.14762566983699799, 0.051694855093955994], [-0.003039010101929307, -0.08070315420627594, 0.05122142285108566, -0.09322132915258408, -0.0028685296420007944, 0.052089642733335495], [-0.31933391094207764, -0.21397575736045837, 0.32965755462646484, -0.3313125669956207, -0.029314756393432617, 0.40385502576828003], [0.14747440814971924, 0.01155875064432621, -0.3537920415401459, 0.20223718881607056, -0.29078739881515503, -0.1158871054649353], [-0.13697397708892822, -0.060456421226263046, 0.004465537145733833, 0.33672627806663513, 0.050965242087841034, 0.365665078163147], [0.24973057210445404, -0.2581002712249756, 0.18310102820396423, -0.28858911991119385, -0.17302589118480682, 0.12007509171962738]], dtype=torch.float32), torch.tensor([0.13480035960674286, 0.30627933144569397, -0.13142161071300507, 0.0006535490392707288, 0.21017584204673767, -0.39481374621391296, 0.2951556146144867, -0.33758968114852905, 0.005626682657748461, -0.06940905749797821, -0.21501334011554718, 0.053958602249622345, 0.3375881612300873, -0.11933895200490952, -0.24237461388111115, -0.15098607540130615, -0.40463462471961975, 0.18428081274032593, -0.19606684148311615, -0.2724405527114868, -0.2351924329996109, 0.23472483456134796, 0.21619755029678345, 0.313339501619339], dtype=torch.float32), torch.tensor([0.14808109402656555, -0.1363384872674942, -0.11408423632383347, 0.12060877680778503, 0.3355942666530609, 0.11099952459335327, -0.1931607872247696, -0.19190829992294312, -0.3859861195087433, 0.08820123225450516, -0.22910180687904358, -0.3639843165874481, 0.3579833209514618, -0.2651210129261017, -0.04644295945763588, 0.11696050316095352, 0.013006106950342655, -0.2747028172016144, -0.3299959599971771, 0.3254075348377228, 0.06647862493991852, 0.3386928141117096, -0.1368614137172699, 0.12025175243616104], dtype=torch.float32)],
    [torch.tensor([[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]], dtype=torch.float32), torch.tensor([[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]], dtype=torch.float32)],
]

RUN_SEED = 0  # each compared call starts from torch.manual_seed(RUN_SEED): random ops draw alike


def fresh(value, fp64=False):  # a copy on DEVICE for one run (ops may mutate inputs); fp64: floats as float64
    if isinstance(value, (list, tuple)):
        return type(value)(fresh(v, fp64) for v in value)
    wide = fp64 and isinstance(value, torch.Tensor) and value.is_floating_point()
    return value.detach().to("cpu", torch.float64 if wide else None, copy=True) if torch.is_tensor(value) else value


def leaves(v):  # flattened: lists and tuples in order, a dict as each key (sorted) then its value
    if isinstance(v, dict):
        return [x for k in sorted(v, key=repr) for x in [k] + leaves([v[k]])]
    return [x for i in v for x in (leaves(i) if isinstance(i, (list, tuple, dict)) else [i])]


def reference(inputs, fp64=False):  # eager
    # Repro as plain PyTorch (tsrepro checked it against TorchScript's interpreter)
    torch.manual_seed(RUN_SEED)
    return Repro().to("cpu", torch.float64 if fp64 else None)(*inputs)


def backend(inputs, fp64=False):  # inductor
    # torch.compile(Repro()) with Inductor
    import torch._inductor.config  # PyTorch 2: on 1.x an ImportError, this cannot run here (exit 2)
    module = Repro().to("cpu")
    with torch._inductor.config.patch({}):
        compiled = torch.compile(module, backend="inductor")
        state = {k: v.clone() for k, v in module.state_dict().items()}
        torch.manual_seed(RUN_SEED)
        compiled(*fresh(inputs))  # the first call compiles
        module.load_state_dict(state)  # the call that counts starts from the same state
        torch.manual_seed(RUN_SEED)
        return compiled(*inputs)


def difference(ref, res, ref64):  # why an output differs, or None: torch._dynamo.utils.same()'s rules as tsrepro's runner/exec/compare.cpp applies them
    if isinstance(ref, float):  # a float: within tol, as allclose judges (NaN equals NaN under equal_nan)
        close = type(res) == float and torch.allclose(torch.tensor([ref]).double(), torch.tensor([res]).double(), 1e-04, 1e-04, True)
        return None if close else "%r vs %r" % (ref, res)
    if not torch.is_tensor(ref) or not torch.is_tensor(res):  # any other value (int, bool, str, None): equal
        return None if type(ref) == type(res) and ref == res else "%r vs %r" % (ref, res)
    if ref.dtype != res.dtype:  # same(exact_dtype=True): the dtypes alike
        return "%s vs %s" % (ref.dtype, res.dtype)
    if ref.shape != res.shape:  # tsrepro: the shapes alike (allclose would broadcast)
        return "shape %s vs %s" % (list(ref.shape), list(res.shape))
    if not (res.is_floating_point() or res.is_complex()):  # integers and bools: equal (tsrepro: no rounding excuse)
        return None if torch.equal(ref, res) else "%d of %d elements differ" % ((ref != res).sum(), res.numel())
    if torch.allclose(ref, res, 1e-04, 1e-04, True):  # same(): allclose at tol
        return None
    why = "not allclose at tol=%g (max |res - ref| = %g)" % (1e-04, (res - ref).abs().nan_to_num(float("inf")).max())
    if not torch.is_tensor(ref64) or ref64.dtype != torch.float64 or ref64.shape != ref.shape or res.is_complex():  # no fp64 reference: allclose judges alone
        return why
    nan_avoided = ref.isnan().any() and not res.isnan().any() and not ref64.isnan().any()  # same(): res avoids ref's NaN
    if nan_avoided and torch.allclose(ref64.to(res.dtype), res, 0.04, 0.04, True):  # and matches fp64 loosely: res is better
        return None
    finite = ref.isfinite() & ref64.isfinite()  # tsrepro: the RMSE rule judges where both references are finite,
    if not torch.allclose(ref[~finite], res[~finite], 0, 0, True):  # and res must repeat ref's inf and NaN elsewhere
        return why + " and res differs where a reference is inf or NaN"
    rmse = [(side[finite].double() - ref64[finite]).square().mean().sqrt().item() for side in (ref, res)]  # same(): rmse()
    small = ref64.numel() < 1000 or ref.dim() == 4 and ref.shape[-2:] == (1, 1) or 1e-04 >= 0.02  # get_multiplier(): 3 for these,
    multiplier = 3.0 if small or res.dtype in (torch.half, torch.bfloat16) else 2.0  # and for half precision; else 2
    limit = multiplier * rmse[0] + 1e-04 / 10  # same(): RMSE(res, fp64) may be this much
    return None if not finite.any() or rmse[1] <= limit else why + " and RMSE(res, fp64) = %g > %g" % (rmse[1], limit)


if __name__ == "__main__":
    ref = None
    try:
        ref = leaves([reference(fresh(INPUTS))])  # the reference runs first: it is healthy
        signal.alarm(2100)  # tsrepro counts a slower backend as hung: SIGALRM ends it
        res = leaves([backend(fresh(INPUTS))])  # a crash is left to happen
    except Exception as error:  # in the reference, or a backend this PyTorch lacks: cannot run here (exit 2)
        print("%s raised %s: %s" % ("reference" if ref is None else "backend", type(error).__name__, error))
        sys.exit(2 if ref is None or isinstance(error, ImportError) else 0)
    try:  # an fp64 reference excuses results that are merely noisy (dtype-specific graphs have none)
        ref64 = leaves([reference(fresh(INPUTS, fp64=True), fp64=True)])  # Repro's floats as float64 too
    except Exception:
        ref64 = ref
    failed = len(ref) != len(res)  # as many outputs, each alike
    for i, sides in enumerate(zip(ref, res, ref64)):
        why = difference(*sides)
        if why is not None:
            print("output %d: %s" % (i, why))
            failed = True
    print("verdict: %s (expected: accuracy)" % ("accuracy" if failed else "pass"))
    sys.exit(failed)
