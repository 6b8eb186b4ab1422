/*
 * perfdata_names.c - names of perf.data record types, features and
 * sample_type bits, as perf spells them.
 */
#include "formats/perfdata_internal.h"

const char *perfdata_record_name(uint32_t type)
{
	static const char *const names[] = {
		[PD_REC_MMAP] = "MMAP",
		[PD_REC_LOST] = "LOST",
		[PD_REC_COMM] = "COMM",
		[PD_REC_EXIT] = "EXIT",
		[PD_REC_THROTTLE] = "THROTTLE",
		[PD_REC_UNTHROTTLE] = "UNTHROTTLE",
		[PD_REC_FORK] = "FORK",
		[PD_REC_READ] = "READ",
		[PD_REC_SAMPLE] = "SAMPLE",
		[PD_REC_MMAP2] = "MMAP2",
		[PD_REC_AUX] = "AUX",
		[PD_REC_ITRACE_START] = "ITRACE_START",
		[PD_REC_LOST_SAMPLES] = "LOST_SAMPLES",
		[PD_REC_SWITCH] = "SWITCH",
		[PD_REC_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PD_REC_NAMESPACES] = "NAMESPACES",
		[PD_REC_KSYMBOL] = "KSYMBOL",
		[PD_REC_BPF_EVENT] = "BPF_EVENT",
		[PD_REC_CGROUP] = "CGROUP",
		[PD_REC_TEXT_POKE] = "TEXT_POKE",
		[PD_REC_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
		[PD_REC_CALLCHAIN_DEFERRED] = "CALLCHAIN_DEFERRED",
		[PD_REC_HEADER_ATTR] = "ATTR",
		[PD_REC_HEADER_EVENT_TYPE] = "EVENT_TYPE",
		[PD_REC_HEADER_TRACING_DATA] = "TRACING_DATA",
		[PD_REC_HEADER_BUILD_ID] = "BUILD_ID",
		[PD_REC_FINISHED_ROUND] = "FINISHED_ROUND",
		[PD_REC_ID_INDEX] = "ID_INDEX",
		[PD_REC_AUXTRACE_INFO] = "AUXTRACE_INFO",
		[PD_REC_AUXTRACE] = "AUXTRACE",
		[PD_REC_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
		[PD_REC_THREAD_MAP] = "THREAD_MAP",
		[PD_REC_CPU_MAP] = "CPU_MAP",
		[PD_REC_STAT_CONFIG] = "STAT_CONFIG",
		[PD_REC_STAT] = "STAT",
		[PD_REC_STAT_ROUND] = "STAT_ROUND",
		[PD_REC_EVENT_UPDATE] = "EVENT_UPDATE",
		[PD_REC_TIME_CONV] = "TIME_CONV",
		[PD_REC_HEADER_FEATURE] = "FEATURE",
		[PD_REC_COMPRESSED] = "COMPRESSED",
		[PD_REC_FINISHED_INIT] = "FINISHED_INIT",
		[PD_REC_COMPRESSED2] = "COMPRESSED2",
		[PD_REC_BPF_METADATA] = "BPF_METADATA",
		[PD_REC_SCHEDSTAT_CPU] = "SCHEDSTAT_CPU",
		[PD_REC_SCHEDSTAT_DOMAIN] = "SCHEDSTAT_DOMAIN",
	};

	if (type >= ARRAY_SIZE(names))
		return NULL;
	return names[type];
}

const char *perfdata_feature_name(unsigned id)
{
	static const char *const names[] = {
		[PD_FEAT_TRACING_DATA] = "tracing_data",
		[PD_FEAT_BUILD_ID] = "build_id",
		[PD_FEAT_HOSTNAME] = "hostname",
		[PD_FEAT_OSRELEASE] = "osrelease",
		[PD_FEAT_VERSION] = "version",
		[PD_FEAT_ARCH] = "arch",
		[PD_FEAT_NRCPUS] = "nrcpus",
		[PD_FEAT_CPUDESC] = "cpudesc",
		[PD_FEAT_CPUID] = "cpuid",
		[PD_FEAT_TOTAL_MEM] = "total_mem",
		[PD_FEAT_CMDLINE] = "cmdline",
		[PD_FEAT_EVENT_DESC] = "event_desc",
		[PD_FEAT_CPU_TOPOLOGY] = "cpu_topology",
		[PD_FEAT_NUMA_TOPOLOGY] = "numa_topology",
		[PD_FEAT_BRANCH_STACK] = "branch_stack",
		[PD_FEAT_PMU_MAPPINGS] = "pmu_mappings",
		[PD_FEAT_GROUP_DESC] = "group_desc",
		[PD_FEAT_AUXTRACE] = "auxtrace",
		[PD_FEAT_STAT] = "stat",
		[PD_FEAT_CACHE] = "cache",
		[PD_FEAT_SAMPLE_TIME] = "sample_time",
		[PD_FEAT_MEM_TOPOLOGY] = "mem_topology",
		[PD_FEAT_CLOCKID] = "clockid",
		[PD_FEAT_DIR_FORMAT] = "dir_format",
		[PD_FEAT_BPF_PROG_INFO] = "bpf_prog_info",
		[PD_FEAT_BPF_BTF] = "bpf_btf",
		[PD_FEAT_COMPRESSED] = "compressed",
		[PD_FEAT_CPU_PMU_CAPS] = "cpu_pmu_caps",
		[PD_FEAT_CLOCK_DATA] = "clock_data",
		[PD_FEAT_HYBRID_TOPOLOGY] = "hybrid_topology",
		[PD_FEAT_PMU_CAPS] = "pmu_caps",
		[PD_FEAT_CPU_DOMAIN_INFO] = "cpu_domain_info",
		[PD_FEAT_E_MACHINE] = "e_machine",
		[PD_FEAT_CLN_SIZE] = "cln_size",
	};

	if (id >= ARRAY_SIZE(names))
		return NULL;
	return names[id];
}

void perfdata_sample_type_str(uint64_t st, struct strbuf *out)
{
	static const char *const bits[] = {
		"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU",
		"PERIOD", "STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER",
		"STACK_USER", "WEIGHT", "DATA_SRC", "IDENTIFIER",
		"TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX", "CGROUP",
		"DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
	};
	bool first = true;
	unsigned i;

	for (i = 0; i < 64; i++) {
		if (!(st & (1ULL << i)))
			continue;
		if (!first)
			strbuf_addch(out, '|');
		first = false;
		if (i < ARRAY_SIZE(bits))
			strbuf_addstr(out, bits[i]);
		else
			strbuf_addf(out, "BIT%u", i);
	}
	if (first)
		strbuf_addstr(out, "0");
}
