# mk/gpp.mk - the GPP kernel built a second time without FMA contraction,
# for GTC 2019's experiment 2 (docs/gpp.md).  Included by the Makefile;
# kernels/gpp.cu itself is built by the Makefile's kernels rule (bin/gpp).
ifneq ($(NVCC),)
ifneq ($(VARIANT),san)
CUDA_PROGS += gpp_nofma
$(B)/bin/gpp_nofma: kernels/gpp.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) --fmad=false -DGPP_FMAD=0 -o $@ $<
endif
endif
