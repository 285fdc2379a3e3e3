class __CLASS__(__BASE__):  # __COMMENT__
    def __init__(self):  #[attributes]
        super().__init__()  #[attributes]
        __ATTRIBUTES__
  #[attributes]
    def train(self, mode=True):  # eval() clears the training flags forward reads, as in the model's submodules  #[training_flags]
        __TRAINING_FLAGS__
        return super().train(mode)  #[training_flags]
  #[training_flags]
    __FORWARD__
