# expect: compile_error syntax_error
def workload(x, scale)
    return x
