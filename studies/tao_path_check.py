"""Off-workflow TAO path check: one warm-started sparsity path on a data set's training part, validation and test
error at every C (used for issue #8). Usage: python studies/tao_path_check.py DATASET DEPTH INIT ACCEPT C1,C2,... [JSON params]
"""
import sys, time, json
from treeopt.data import load_split, prepare_split
from treeopt.experiments.plan.config import load_config
from treeopt.tao.tao import tao_path
ds = sys.argv[1]; depth = int(sys.argv[2]); init = sys.argv[3]; accept = sys.argv[4]
Cs = [float(c) for c in sys.argv[5].split(",")]
extra = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
s = load_split(prepare_split(ds, load_config("config.yaml"), 0))
t = time.time()
rows, est = tao_path(s.X_train, s.y_train, Cs, eval_sets={"val": (s.X_val, s.y_val), "test": (s.X_test, s.y_test)},
                     max_depth=depth, init=init, accept=accept, random_state=0, **extra)
it = est.init_tree_.stats()
print(f"{ds} d{depth} {init} {accept} {extra} init_internal={it['n_internal']} time={time.time()-t:.0f}s", flush=True)
for r in rows:
    print(f"  C={r['C']:<7g} it={r['n_iter']:2d} train={r['train_error']:6.2f} val={r['val_error']:6.2f} test={r['test_error']:6.2f} internal={r['n_internal']:4d} nnz={r['nonzero_weights']}", flush=True)
