def __ROLE__(__PARAMETERS__):  # python: tsrepro's eager module form, checked by tsrepro itself
    print("repro.py: the python backend checks tsrepro's own module form; run tsrepro run on the case")
    sys.exit(2)  # the repro cannot run here
