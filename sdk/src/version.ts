// Sent in User-Agent so server logs tell SDK versions apart. Kept equal to package.json by a test
// (importing package.json from src would pull it into the build's rootDir).
export const SDK_VERSION = '0.1.0';
