from memtape.testing import PolicyMachine
class KeepLastMachine(PolicyMachine): policy = "examples.keep_last:KeepLast"
TestKeepLast = KeepLastMachine.TestCase
