#!/usr/bin/env python3
"""Train the content classifier (src/template/content/model.txt) from train_dump's blocks.

  train.py BLOCKS.tsv [--wcxb-types ../wcxb-dev/TYPES.tsv] [--cv site [--seed N]|dataset|type [--only F,...]]
           [--out MODEL]
           [--rounds N] [--leaves N] [--min-leaf N] [--lr X]

The defaults (100 rounds of 31 leaves, learning rate 0.1) are the shipped models' settings.

A block is content when most of its tokens lie in gold runs (`covered / tokens >= 0.5`). Each
block weighs its share of its page's tokens, and each page weighs 1/sqrt(pages of its site), so
every page counts about as much as the metric counts it (F1 averaged over pages, then sites) and
no site with hundreds of pages drowns the rest.

--cv prints out-of-fold figures: by site (5 folds, sites kept whole), leave-one-dataset-out, or
leave-one-page-type-out (WCXB's types; every other dataset is one type of its own). The page F1 is
computed from the dump's token counts (kept covered tokens against kept tokens and the page's
covered tokens), beside the rules' verdict alone, so it tracks the real metric closely without
running the cleaner; the real figures come from devtable.py with the model installed.
--out DIR trains both stages on everything and writes DIR/stage1.txt and DIR/stage2.txt (LightGBM's
text format, numeric splits only): src/template/content/ is where thresher reads them from.
"""
import argparse
import os
import sys

import lightgbm as lgb
import numpy as np
import pandas as pd

META = ["dataset", "site", "page", "block", "eval_tokens", "covered", "g_item", "g_run", "g_container",
        "g_up1", "g_up3"]
GROUPS = ["g_item", "g_run", "g_container", "g_up1", "g_up3"]
CONTEXT = ["p", "p_item", "p_run", "p_container", "p_up1", "p_up3", "p_prev", "p_next", "p_prev2",
           "p_next2", "p_page", "p_page_share"]


def load(path, types_path):
    df = pd.read_csv(path, sep="\t", dtype={"site": str, "page": str, "text": str},
                     keep_default_na=False, quoting=3)
    df = df[df.eval_tokens > 0].reset_index(drop=True).copy()
    df["label"] = (df.covered >= 0.5 * df.eval_tokens).astype(int)
    df["pagekey"] = df.dataset + "/" + df.site + "/" + df.page
    page_tokens = df.groupby("pagekey").eval_tokens.transform("sum")
    site_pages = df.groupby(["dataset", "site"]).page.transform("nunique")
    df["weight"] = df.eval_tokens / page_tokens / np.sqrt(site_pages)
    types = {}
    if types_path:
        for line in open(types_path):
            fid, t, site = line.rstrip("\n").split("\t")
            types[f"wcxb-dev/{site}/{fid}"] = t
    df["ptype"] = [types.get(k, d) for k, d in zip(df.pagekey, df.dataset)]
    return df.copy()


def features(df):
    return [c for c in df.columns if c not in META + CONTEXT + ["label", "pagekey", "weight", "ptype", "text"]]


def context(df, p):
    """The stage-two context features of classify::context, from stage-one probabilities p."""
    bw = np.maximum(np.rint(np.exp2(df["tokens"].to_numpy()) - 1.0), 1.0)
    d = pd.DataFrame({"pagekey": df.pagekey.to_numpy(), "w": bw, "wp": bw * p, "p": p})
    out = {"p": p}
    for g, name in zip(GROUPS, CONTEXT[1:6]):
        key = df[g].to_numpy()
        d["g"] = key
        s = d.groupby(["pagekey", "g"])[["wp", "w"]].transform("sum")
        mean = (s.wp / s.w).to_numpy()
        out[name] = np.where(key >= 0, mean, p)
    g = d.groupby("pagekey")

    def window(lo, hi):
        # Mean over blocks k+lo .. k+hi-1 of the same page (k's own p when none).
        sw = np.zeros(len(d))
        swp = np.zeros(len(d))
        for off in range(lo, hi):
            sw += g.w.shift(-off).fillna(0).to_numpy()
            swp += g.wp.shift(-off).fillna(0).to_numpy()
        return np.where(sw > 0, swp / np.where(sw > 0, sw, 1), p)
    out["p_prev"] = window(-1, 0)
    out["p_next"] = window(1, 2)
    out["p_prev2"] = window(-2, 0)
    out["p_next2"] = window(1, 3)
    tot = g.w.transform("sum").to_numpy()
    out["p_page"] = g.wp.transform("sum").to_numpy() / tot
    d["wa"] = np.where(p > 0.5, bw, 0.0)
    out["p_page_share"] = d.groupby("pagekey").wa.transform("sum").to_numpy() / tot
    return pd.DataFrame(out, index=df.index)[CONTEXT]


def site_folds(df, k, seed):
    sites = sorted(set(df.dataset + "/" + df.site))
    rng = np.random.default_rng(seed)
    rng.shuffle(sites)
    fold_of = {s: i % k for i, s in enumerate(sites)}
    return np.array([fold_of[d + "/" + s] for d, s in zip(df.dataset, df.site)])


def two_stage(df, cols, a):
    """Stage one on the features, stage two on the features and the context of stage one's
    out-of-fold probabilities. Returns both models."""
    inner = site_folds(df, 5, 11)
    p1 = np.zeros(len(df))
    for f in range(5):
        tr, te = inner != f, inner == f
        m = train(df[tr], cols, a)
        p1[te] = m.predict(df.loc[te, cols].to_numpy(np.float64))
    m1 = train(df, cols, a)
    ctx = context(df, p1)
    both = pd.concat([df[cols], ctx], axis=1)
    m2 = train(both.assign(label=df.label, weight=df.weight), cols + CONTEXT, a)
    return m1, m2


def predict_two(m1, m2, df, cols):
    p1 = m1.predict(df[cols].to_numpy(np.float64))
    ctx = context(df, p1)
    both = pd.concat([df[cols], ctx], axis=1)
    return m2.predict(both[cols + CONTEXT].to_numpy(np.float64), raw_score=True)


def params(a):
    return dict(
        objective="binary",
        learning_rate=a.lr,
        num_leaves=a.leaves,
        min_data_in_leaf=a.min_leaf,
        min_sum_hessian_in_leaf=1e-6,
        feature_fraction=0.8,
        bagging_fraction=0.8,
        bagging_freq=1,
        lambda_l2=1.0,
        max_bin=255,
        verbose=-1,
        num_threads=2,
        seed=7,
        deterministic=True,
        force_row_wise=True,
        use_missing=False,
        zero_as_missing=False,
    )


def train(df, cols, a):
    data = lgb.Dataset(df[cols].to_numpy(np.float64), label=df.label.to_numpy(),
                       weight=df.weight.to_numpy() * 1000.0, feature_name=cols, free_raw_data=False)
    return lgb.train(params(a), data, num_boost_round=a.rounds)


def page_f1(df, kept):
    """Mean page F1 per page, from token counts."""
    kept = np.asarray(kept, dtype=bool)
    d = pd.DataFrame({"pagekey": df.pagekey, "kt": np.where(kept, df.eval_tokens, 0),
                      "kc": np.where(kept, df.covered, 0), "c": df.covered})
    g = d.groupby("pagekey").sum()
    kept_tok, kept_cov, gold = g.kt, g.kc, g.c
    p = np.where(kept_tok > 0, kept_cov / kept_tok.clip(lower=1), 0.0)
    r = np.where(gold > 0, kept_cov / gold.clip(lower=1), 0.0)
    f = np.where(p + r > 0, 2 * p * r / (p + r + 1e-12), 0.0)
    return pd.Series(f, index=kept_tok.index), pd.Series(p, index=kept_tok.index), pd.Series(r, index=kept_tok.index)


def report(df, pred_kept):
    rules = page_f1(df, df.rule_kept.to_numpy() > 0.5)[0]
    model, mp, mr = page_f1(df, pred_kept)
    oracle = page_f1(df, df.label.to_numpy() > 0)[0]
    first = df.groupby("pagekey").first()
    out = pd.DataFrame({"rules": rules, "model": model, "mp": mp, "mr": mr, "oracle": oracle,
                        "dataset": first.dataset, "ptype": first.ptype, "site": first.site})
    cols = ["rules", "model", "mp", "mr", "oracle"]
    rows = []
    for name, grp in out[out.dataset == "wcxb-dev"].groupby("ptype"):
        rows.append((name, len(grp), *grp[cols].mean()))
    w = out[out.dataset == "wcxb-dev"]
    if len(w):
        rows.append(("wcxb ALL", len(w), *w[cols].mean()))
    # Datasets other than WCXB: macro over sites (as score.py).
    for name, grp in out[out.dataset != "wcxb-dev"].groupby("dataset"):
        s = grp.groupby("site")[cols].mean()
        rows.append((name + " (sites)", len(s), *s.mean()))
    print(f"{'set':24} {'n':>5} {'rules':>7} {'model':>7} {'gain':>7} {'P':>6} {'R':>6} {'oracle':>7}")
    for name, n, r, m, p, rc, o in rows:
        print(f"{name:24} {n:5d} {r:7.3f} {m:7.3f} {m - r:+7.3f} {p:6.3f} {rc:6.3f} {o:7.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("blocks")
    ap.add_argument("--wcxb-types", default="../wcxb-dev/TYPES.tsv")
    ap.add_argument("--cv", choices=["site", "dataset", "type", "none"], default="site")
    ap.add_argument("--out")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--min-leaf", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=7, help="how --cv site deals sites into folds "
                    "(another seed gives another draw: a feature's gain should hold across draws)")
    ap.add_argument("--stages", type=int, choices=[1, 2], default=2)
    ap.add_argument("--save-oof", help="write the out-of-fold raw scores per block (TSV)")
    ap.add_argument("--only", help="hold out only these folds (comma-separated dataset or page-type "
                    "names; --cv dataset|type) and report only their pages")
    a = ap.parse_args()
    cache = a.blocks + ".pkl"
    if os.path.exists(cache) and os.path.getmtime(cache) > os.path.getmtime(a.blocks):
        df = pd.read_pickle(cache)
    else:
        df = load(a.blocks, a.wcxb_types)
        df.to_pickle(cache)
    cols = features(df)
    print(f"{len(df)} blocks, {df.pagekey.nunique()} pages, {len(cols)} features", file=sys.stderr)
    if a.cv != "none":
        if a.cv == "site":
            fold = site_folds(df, 5, a.seed)
        elif a.cv == "dataset":
            names = sorted(df.dataset.unique())
            fold = df.dataset.map({n: i for i, n in enumerate(names)}).to_numpy()
        else:
            names = sorted(df.ptype.unique())
            fold = df.ptype.map({n: i for i, n in enumerate(names)}).to_numpy()
        pred = np.zeros(len(df))
        held = sorted(set(fold))
        if a.only:
            wanted = a.only.split(",")
            if a.cv == "site":
                sys.exit("--only needs --cv dataset or --cv type")
            missing = sorted(set(wanted) - set(names))
            if missing:
                sys.exit(f"--only: no fold named {missing}; the folds are {names}")
            held = [names.index(n) for n in wanted]
        for f in held:
            tr, te = fold != f, fold == f
            if a.stages == 1:
                m = train(df[tr], cols, a)
                pred[te] = m.predict(df.loc[te, cols].to_numpy(np.float64), raw_score=True)
            else:
                m1, m2 = two_stage(df[tr].reset_index(drop=True), cols, a)
                pred[te] = predict_two(m1, m2, df[te].reset_index(drop=True), cols)
            if a.only:
                # A fold takes minutes: its figures as soon as they are known.
                print(f"held out {names[f]}:")
                report(df[te].reset_index(drop=True), pred[te] > 0)
                sys.stdout.flush()
        rows = np.isin(fold, held)
        report(df[rows].reset_index(drop=True), pred[rows] > 0)
        if a.save_oof:
            df[["pagekey", "block", "eval_tokens", "covered", "label", "rule_kept", "text"]].assign(
                raw=pred).to_csv(a.save_oof, sep="\t", index=False)
    if a.out:
        m1, m2 = two_stage(df, cols, a)
        for m, name in ((m1, "stage1.txt"), (m2, "stage2.txt")):
            save(m, os.path.join(a.out, name))
        imp = sorted(zip(m2.feature_importance("gain"), cols + CONTEXT), reverse=True)
        print("stage two's top features by gain:", ", ".join(f"{c} {g:.0f}" for g, c in imp[:25]),
              file=sys.stderr)


def save(m, path):
    """The model in LightGBM's text format, without what thresher's loader does not read."""
    text = m.model_to_string()
    keep = ("tree", "version", "num_class", "num_tree_per_iteration", "label_index",
            "max_feature_idx", "objective", "feature_names", "Tree=", "num_leaves", "num_cat",
            "split_feature", "threshold", "decision_type", "left_child", "right_child",
            "leaf_value", "shrinkage", "end of trees")
    lines = [l for l in text.splitlines() if l == "" or l.startswith(keep)]
    end = lines.index("end of trees")
    open(path, "w").write("\n".join(lines[: end + 1]) + "\n")


if __name__ == "__main__":
    main()
