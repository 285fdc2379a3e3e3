def __ROLE__(__PARAMETERS__):  # pyeager: tsrepro's eager module form, checked by tsrepro itself
    print("repro.py: the pyeager backend checks tsrepro's own module form; run tsrepro run on the case")
    sys.exit(2)  # the repro cannot run here
