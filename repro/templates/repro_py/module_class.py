class __CLASS__(__BASE__):  # __COMMENT__
    def __init__(self):  #[attributes]
        super().__init__()  #[attributes]
__ATTRIBUTES__
  #[attributes]
__FORWARD__
