// The parts of three.js the viewer uses, bundled into static/three.min.js (docs/development.md).
export {
  BoxGeometry, BufferAttribute, BufferGeometry, Color, ConeGeometry, CylinderGeometry,
  DirectionalLight, DoubleSide, GridHelper, Group, HemisphereLight, Matrix4, Mesh,
  MeshStandardMaterial, PerspectiveCamera, Quaternion, Scene, SphereGeometry, Vector3,
  WebGLRenderer, REVISION,
} from 'three';
export { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
