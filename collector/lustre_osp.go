package collector

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// The osp collector: the state an MDT keeps of each OST and other MDT it
// talks to through an OSP device (osp.<fs>-OST0000-osc-MDT0000.*).

var (
	ospLabels     = []string{"component", "target", "mdt"}
	ospActiveDesc = prometheus.NewDesc("lustre_osp_active",
		"Whether the MDT uses the target (1) or it was deactivated (0) (osp active).", ospLabels, nil)
	ospMaxCreateDesc = prometheus.NewDesc("lustre_osp_max_create_objects",
		"Most objects the MDT precreates on the OST at once; 0 stops new objects there (osp max_create_count).", ospLabels, nil)
)

func init() {
	match := func(param string) (valueMetric, bool) {
		prefix, device, leaf, ok := lctl.DeviceParam(param)
		if !ok || prefix != "osp" {
			return valueMetric{}, false
		}
		var desc *prometheus.Desc
		switch leaf {
		case "active":
			desc = ospActiveDesc
		case "max_create_count":
			desc = ospMaxCreateDesc
		default:
			return valueMetric{}, false
		}
		target, mdt, ok := ospDevice(device)
		if !ok {
			return valueMetric{}, false
		}
		return valueMetric{desc: desc, valueType: prometheus.GaugeValue, scale: 1, labels: []string{lctl.TargetComponent(target), target, mdt}}, true
	}
	registerValues("osp", []string{"osp.*.active", "osp.*.max_create_count"}, match)
}

// ospDevice splits "lab-OST0000-osc-MDT0000" into the remote target
// "lab-OST0000" and the local MDT "lab-MDT0000".
func ospDevice(device string) (target, mdt string, ok bool) {
	i := strings.LastIndexByte(device, '-')
	if i <= 0 {
		return "", "", false
	}
	local := device[i+1:]
	rest, found := strings.CutSuffix(device[:i], "-osc")
	if !found {
		rest, found = strings.CutSuffix(device[:i], "-osp")
	}
	if !found || rest == "" {
		return "", "", false
	}
	fs := ""
	if j := strings.LastIndexByte(rest, '-'); j > 0 {
		fs = rest[:j+1]
	}
	return rest, fs + local, true
}
