# SPDX-License-Identifier: GPL-2.0-or-later
# oci.sh: Slurm's own OCI support (srun --container=BUNDLE, oci.conf) with
# crun, for tests/0100. Source after lib.sh, with the cluster started and
# IMAGE built: the bundle's rootfs is the Apptainer test image (a plain
# directory), its config.json crun's default spec.
#
#   oci_points   the step's ranks inside the bundle see the plugin's values
#                and meet; where Slurm or crun cannot start the container
#                here, one skip per point with what they said.

oci_points() {
	local bundle=$work/bundle n=4 why
	if ! command -v crun >/dev/null; then
		for i in $(seq $n); do skip "crun is not installed: srun --container"; done
		return
	fi
	mkdir -p "$bundle" "$work/crun"
	# crun's default spec, rooted at the image, with its host network (the
	# ranks meet over the cluster's loopback addresses).
	(cd "$bundle" && crun spec) 2>/dev/null
	/usr/bin/python3 - "$bundle/config.json" "$IMAGE" "$ctr_dir" <<'PY'
import json, sys
p, root, tests = sys.argv[1:4]
c = json.load(open(p))
c["root"] = {"path": root, "readonly": True}
c["process"]["terminal"] = False
c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] not in ("network", "user")]
c["mounts"].append({"destination": tests, "type": "bind", "source": tests, "options": ["rbind", "ro"]})
c["mounts"].append({"destination": "/etc/hosts", "type": "bind", "source": "/etc/hosts", "options": ["bind", "ro"]})
json.dump(c, open(p, "w"), indent=1)
PY
	cat > "$RDZV_CLUSTER_DIR/oci.conf" <<EOC
IgnoreFileConfigJson=false
EnvExclude="^(SLURM_CONF|SLURM_CONF_SERVER)="
RunTimeEnvExclude="^(SLURM_CONF|SLURM_CONF_SERVER)="
RunTimeRun="crun --cgroup-manager=disabled --root=$work/crun run --bundle %b %n.%u.%j.%s.%t"
RunTimeKill="crun --root=$work/crun kill -a %n.%u.%j.%s.%t SIGTERM"
RunTimeDelete="crun --root=$work/crun delete --force %n.%u.%j.%s.%t"
EOC
	run_to 180 srun -N2 --ntasks-per-node=2 --rdzv=torch --container="$bundle" python3 "$RANK_PY"
	rm -f "$RDZV_CLUSTER_DIR/oci.conf"
	if [ "$(ctr_count)" = 0 ]; then
		why=$(printf '%s\n' "$out" | grep -Ev '^$|^srun: error: .*Exited with exit code' | sort -u | head -n 3 | tr '\n' ' ' | cut -c1-300)
		for i in $(seq $n); do skip "srun --container=BUNDLE (oci.conf, crun) does not start here: rc $rc: $why"; done
		return
	fi
	is "$rc" 0 "srun --container=BUNDLE (crun): srun exits 0"
	is "$(met)" yes "srun --container: 4 ranks meet inside the bundle"
	is "$(ctr_reports RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE MASTER_ADDR)" "$(printf "%s\n" "$want_meet" | sed "s/ RDZV_IMAGE_VAR=.*//")" \
		"srun --container: RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR are the plugin's"
	is "$(ctr_reports in_image | sort -u)" "in_image=True" "srun --container: the tasks ran in the bundle's root"
}
