{{/*
Names and labels shared by every template. Names are capped at 63 characters: Kubernetes label
values and most object names may not be longer.
*/}}

{{- define "sizeup.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release name, suffixed with the chart name unless it already contains it. */}}
{{- define "sizeup.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "sizeup.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "sizeup.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sizeup.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "sizeup.labels" -}}
helm.sh/chart: {{ include "sizeup.chart" . }}
{{ include "sizeup.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: sizeup
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "sizeup.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "sizeup.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "sizeup.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* "true" when leader election is on: asked for, or implied by more than one replica. */}}
{{- define "sizeup.leaderElect" -}}
{{- if or .Values.leaderElection.enabled (gt (int .Values.replicaCount) 1) }}true{{ end }}
{{- end }}

{{- define "sizeup.leaseName" -}}
{{- default (printf "%s-leader" (include "sizeup.fullname" .)) .Values.leaderElection.leaseName | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The rules the operator needs in every namespace it watches. No wildcards: each verb and resource
is named, and docs/safety.md says why each one is there.
*/}}
{{- define "sizeup.watchRules" -}}
# Watch Deployments for the sizeup.dev/ annotations; patch them (status annotation, variants);
# update them (in-place mode saves and restores the pod template as a read-modify-write guarded
# by resourceVersion, so a user's concurrent edit is never lost); create and delete the
# temporary "<name>-sizeup" clone.
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list", "watch", "patch", "update", "create", "delete"]
# Wait for a variant's pod to be ready, read its IP, restarts and OOMKilled; read Services to pick
# clone labels that no Service selects.
- apiGroups: [""]
  resources: ["pods", "services"]
  verbs: ["get", "list", "watch"]
# Resize mode (and clone mode where the cluster serves it): change the CPU and memory of the
# variant's pod in place. The resize subresource reaches nothing but the containers' resources.
- apiGroups: [""]
  resources: ["pods/resize"]
  verbs: ["patch"]
# Read the profile ConfigMap; write "<name>-sizing" with the results after every variant;
# in place, a pod template too large for an annotation is saved in "<name>-sizeup-original" until restored.
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# Events on the Deployment: sweep started, each verdict, done or failed.
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- if .Values.rbac.podMetrics }}
# Measured CPU and memory of the variant's pod, when a metrics server runs. Read-only.
- apiGroups: ["metrics.k8s.io"]
  resources: ["pods"]
  verbs: ["get", "list"]
{{- end }}
{{- end }}

{{/* Node capacity: read-only, cluster-scoped (nodes are not namespaced). */}}
{{- define "sizeup.nodeRules" -}}
# The largest node's allocatable CPU and memory, so a variant no node can hold is reported as
# such. Read-only; without it these facts are unknown.
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["list"]
{{- end }}

{{/* The DaemonSets' templates, for what they take of each node type (the cost by packing):
read-only, cluster-wide, in both modes. */}}
{{- define "sizeup.daemonSetRules" -}}
# What the DaemonSets take of each node type, for the cost by node packing: each DaemonSet's pod
# template (its requests, nodeSelector, node affinity and tolerations), matched against the nodes'
# labels and taints. list only (no get, no watch, no other verb), and no pods: the cluster's pods
# are never listed. Without it the node types are unknown and the profile's nodes: (or cost:)
# stand.
- apiGroups: ["apps"]
  resources: ["daemonsets"]
  verbs: ["list"]
{{- end }}

{{/* The generator pods' ServiceAccount: no token, no RBAC of its own. */}}
{{- define "sizeup.generatorServiceAccount" -}}
{{- printf "%s-generator" (include "sizeup.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
