"""Import cycles in a graph of modules: shared by tests/test_import_layers.py (code/'s layers,
with grader/ and lessons/mcp_ui/) and tests/grader/test_imports.py (each tree on its own).

`cycles(graph)` takes {module: the modules it imports} and returns every group of two or more
modules that import one another, directly or not (Tarjan's strongly connected components,
iterative: no recursion limit however deep the imports go), each sorted, in a stable order.

Deliberate simplifications: a module that imports itself is no cycle here (Python allows it).
"""


def cycles(graph):
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found
