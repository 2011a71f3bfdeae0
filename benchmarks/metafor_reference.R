# Recompute the frozen random-effects meta-analyses the tests compare pathbench-flow with.
#
# Why: pathbench_flow.stats.uncertainty.meta_analysis pools Fisher-z r with a REML tau^2,
# written in Python; R's metafor (rma, its default REML) is the reference implementation.
# Each case is fitted with each of pathbench-flow's intervals (META_TESTS): Wald (test="z"),
# Knapp-Hartung as metafor has it (test="knha", its scale not truncated) and Knapp-Hartung
# with the scale truncated at 1 (metafor's test="adhoc", pathbench-flow's knha_truncated).
# Install: apt-get install -y r-base-core r-cran-metafor
# Run from the repository root:
#   Rscript benchmarks/metafor_reference.R tests/data/metafor/cases.csv tests/data/metafor/reference.csv
# The tolerance of metafor's REML iterations is tightened (threshold 1e-12) so that its
# tau^2 is the REML optimum to well below the tests' 1e-6, not its default 1e-5 stop.
suppressPackageStartupMessages(library(metafor))
args <- commandArgs(trailingOnly = TRUE)
cases <- read.csv(args[1], stringsAsFactors = FALSE)
tests <- c(z = "z", knha = "knha", knha_truncated = "adhoc")
rows <- list()
for (name in unique(cases$case)) {
  d <- cases[cases$case == name, ]
  es <- escalc(measure = "ZCOR", ri = d$r, ni = d$n)
  for (ours in names(tests)) {
    fit <- rma(yi, vi, data = es, method = "REML", test = tests[[ours]],
               control = list(threshold = 1e-12, maxiter = 10000))
    p <- predict(fit, transf = transf.ztor)
    rows[[paste(name, ours)]] <- data.frame(
      case = name, test = ours, k = fit$k, pooled_r = p$pred, ci_low = p$ci.lb,
      ci_high = p$ci.ub, pi_low = p$pi.lb, pi_high = p$pi.ub, tau2 = fit$tau2, i2 = fit$I2,
      q = fit$QE, pooled_z = as.numeric(coef(fit)), se_z = fit$se
    )
  }
}
out <- do.call(rbind, rows)
write.csv(out, args[2], row.names = FALSE, quote = FALSE)  # 15 significant digits
cat("metafor", as.character(packageVersion("metafor")), "wrote", args[2], "\n")
